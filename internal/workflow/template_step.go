package workflow

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/reelhq/reel/internal/awfhome"
)

// Step templates (AWF's use_template): a state written as
//
//	review:
//	  use_template: ai-analyze
//	  parameters: {prompt: "..."}
//	  on_success: next
//
// becomes the template's state with every {{parameters.NAME}} replaced by
// the parameter's value, when the file is loaded. The using state's own
// fields (flow, hooks, timeout, retry, capture, dir, ...) take precedence
// over the template's; the template's own flow fields name states of the
// template, not of the workflow, and are dropped. Templates are NAME.yaml
// (or .yml) in the project's .reel/templates, then .awf/templates, then
// AWF's global data directory's templates.

var (
	templateFileFields  = []string{"name", "description", "version", "parameters", "states"}
	templateParamFields = []string{"name", "required", "default", "description"}
	templateNameRE      = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
	// {{parameters.x}}, and the dotted and spaced forms AWF leaves
	// unreplaced (they would fail at run time there).
	paramRefRE = regexp.MustCompile(`\{\{-?\s*\.?parameters\.([A-Za-z0-9_-]+)\s*-?\}\}`)
)

// stepTemplate is a parsed template file.
type stepTemplate struct {
	file    string
	name    string
	params  []templateParam
	initial string
	states  []field // the states mapping's entries, initial excluded
	ok      bool    // the file parsed without problems
}

type templateParam struct {
	name     string
	required bool
	def      any
	hasDef   bool
}

func (t *stepTemplate) param(name string) (templateParam, bool) {
	for _, p := range t.params {
		if p.name == name {
			return p, true
		}
	}
	return templateParam{}, false
}

func (t *stepTemplate) paramNames() []string {
	out := make([]string, len(t.params))
	for i, p := range t.params {
		out[i] = p.name
	}
	return out
}

// templateDirs lists where step templates are looked for: for a pack's
// workflow first the project's .reel/templates/PACK and
// .awf/templates/PACK (the user's override) and the pack's own
// templates/; then the project's .reel/templates and .awf/templates, and
// AWF's global templates directory.
func (l *loader) templateDirs() []string {
	var dirs []string
	if p := l.opts.Pack; p != nil {
		if l.opts.ProjectDir != "" {
			dirs = append(dirs, filepath.Join(l.opts.ProjectDir, ".reel", "templates", p.Name), filepath.Join(l.opts.ProjectDir, ".awf", "templates", p.Name))
		}
		dirs = append(dirs, filepath.Join(p.Dir, "templates"))
	}
	if l.opts.ProjectDir != "" {
		dirs = append(dirs, filepath.Join(l.opts.ProjectDir, ".reel", "templates"), filepath.Join(l.opts.ProjectDir, ".awf", "templates"))
	}
	if g := awfhome.FromEnv(nil).Templates(); g != "" {
		dirs = append(dirs, g)
	}
	return dirs
}

// findTemplate returns the path of the template called name.
func (l *loader) findTemplate(name string) (string, error) {
	if !templateNameRE.MatchString(name) || strings.Contains(name, "..") {
		return "", fmt.Errorf("template name %q must be a plain name (the file NAME.yaml in a templates directory)", name)
	}
	var looked []string
	for _, d := range l.templateDirs() {
		for _, ext := range []string{".yaml", ".yml"} {
			p := filepath.Join(d, name+ext)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p, nil
			}
		}
		looked = append(looked, d)
	}
	return "", fmt.Errorf("template %q not found (looked for %s.yaml in %s)", name, name, strings.Join(looked, ", "))
}

// loadTemplate reads and parses a template file once per load; its
// problems are reported once, against the template file.
func (l *loader) loadTemplate(path string) *stepTemplate {
	if t, ok := l.templates[path]; ok {
		return t
	}
	t := &stepTemplate{file: path}
	if l.templates == nil {
		l.templates = map[string]*stepTemplate{}
	}
	l.templates[path] = t
	tl := &loader{file: path, opts: l.opts}
	defer func() {
		t.ok = len(tl.probs) == 0
		l.probs = append(l.probs, tl.probs...)
	}()
	fi, err := os.Stat(path)
	if err == nil && fi.Size() > maxFileSize {
		err = fmt.Errorf("%d bytes exceeds the %d byte limit", fi.Size(), maxFileSize)
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		tl.errAt(Pos{1, 1}, "read template: %v", err)
		return t
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		tl.probs = append(tl.probs, tl.yamlError(data, err))
		return t
	}
	doc, fs, ok := tl.document(&root, "template")
	if !ok {
		return t
	}
	var haveStates bool
	for _, f := range fs {
		switch f.key.Value {
		case "name":
			t.name, _ = tl.str(f.val, "name")
		case "description", "version":
			if f.val.Kind != yaml.ScalarNode {
				tl.errf(f.val, "%s must be a string, got %s", f.key.Value, kindName(f.val))
			}
		case "parameters":
			t.params = tl.templateParams(f.val)
		case "states":
			haveStates = true
			sfs, ok := tl.mapping(f.val, "states")
			if !ok {
				continue
			}
			for _, sf := range sfs {
				if sf.key.Value == "initial" {
					t.initial, _ = tl.str(sf.val, "initial")
					continue
				}
				t.states = append(t.states, sf)
			}
			if len(t.states) == 0 {
				tl.errf(f.val, "template defines no state")
			}
		default:
			tl.unknownField(f.key, "a step template", templateFileFields, "")
		}
	}
	if strings.TrimSpace(t.name) == "" {
		tl.errf(doc, "template is missing its name")
	}
	if !haveStates {
		tl.errf(doc, "template is missing its states")
	}
	return t
}

func (l *loader) templateParams(n *yaml.Node) []templateParam {
	var out []templateParam
	l.list(n, "parameters", "parameter", func(c *yaml.Node, fs []field) {
		p := templateParam{}
		for _, f := range fs {
			switch f.key.Value {
			case "name":
				p.name, _ = l.str(f.val, "parameter name")
			case "required":
				p.required, _ = l.boolv(f.val, "parameter required")
			case "default":
				p.def, p.hasDef = l.value(f.val, "parameter default", false), true
			case "description":
			default:
				l.unknownField(f.key, "a template parameter", templateParamFields, "")
			}
		}
		switch {
		case p.name == "":
			l.errf(c, "parameter is missing its name")
		case slices.ContainsFunc(out, func(q templateParam) bool { return q.name == p.name }):
			l.errf(c, "parameter %q is declared twice", p.name)
		default:
			out = append(out, p)
		}
	})
	return out
}

// primary is the template's state a using state becomes: the one named
// like the template, else its initial state, else its first.
func (t *stepTemplate) primary() field {
	for _, want := range []string{t.name, t.initial} {
		for _, f := range t.states {
			if want != "" && f.key.Value == want {
				return f
			}
		}
	}
	return t.states[0]
}

// flow fields of a template's state name the template's own states.
var templateDropped = []string{"on_success", "on_failure", "transitions"}

// templateState builds the state k: fs (a state with use_template) from
// its template. When it cannot, the reasons are reported and a stand-in
// with the state's own flow is returned.
func (l *loader) templateState(k *yaml.Node, fs []field) *State {
	fields, ok := l.expandTemplate(k, fs)
	if !ok {
		// Keep the state's flow so that its successors are not reported
		// unreachable on top of what is wrong with its template.
		s := &State{Name: k.Value, Type: TypeStep, Pos: pos(k), Command: &Template{}}
		for _, f := range fs {
			switch f.key.Value {
			case "on_success":
				s.OnSuccess, _ = l.str(f.val, "on_success")
			case "on_failure":
				s.OnFailure = l.onFailure(f.val)
			case "transitions":
				s.Transitions = l.transitions(f.val)
			}
		}
		return s
	}
	merged := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: k.Line, Column: k.Column}
	for _, f := range fields {
		merged.Content = append(merged.Content, f.key, f.val)
	}
	return l.state(k, merged)
}

// expandTemplate returns the fields of the state k: fs with its template
// applied, use_template and parameters removed.
func (l *loader) expandTemplate(k *yaml.Node, fs []field) ([]field, bool) {
	var useNode, paramsNode *yaml.Node
	var own []field
	for _, f := range fs {
		switch f.key.Value {
		case "use_template":
			useNode = f.val
		case "parameters":
			paramsNode = f.val
		default:
			own = append(own, f)
		}
	}
	name, ok := l.str(useNode, "use_template")
	if !ok {
		return nil, false
	}
	if i := slices.Index(l.tplStack, name); i >= 0 {
		l.errf(useNode, "circular template reference: %s -> %s", strings.Join(l.tplStack[i:], " -> "), name)
		return nil, false
	}
	path, err := l.findTemplate(name)
	if err != nil {
		l.errf(useNode, "%v", err)
		return nil, false
	}
	t := l.loadTemplate(path)
	if !t.ok {
		l.errf(useNode, "template %q (%s) is invalid; see its problems", name, path)
		return nil, false
	}
	values, ok := l.templateValues(t, name, useNode, paramsNode)
	if !ok {
		return nil, false
	}

	pk := t.primary()
	tl := &loader{file: t.file, opts: l.opts}
	body := tl.substitute(pk.val, values, name)
	tfs, _ := tl.mapping(body, "template state "+pk.key.Value)
	l.probs = append(l.probs, tl.probs...)
	if len(tl.probs) > 0 {
		return nil, false
	}
	// A template built on another template: its problems are the
	// template file's.
	if hasField(tfs, "use_template") {
		nl := &loader{file: t.file, opts: l.opts, templates: l.templates, tplStack: append(slices.Clone(l.tplStack), name)}
		tfs, ok = nl.expandTemplate(pk.key, tfs)
		l.probs = append(l.probs, nl.probs...)
		if !ok {
			l.errf(useNode, "template %q cannot be expanded; see %s", name, t.file)
			return nil, false
		}
	}
	// Check the template's own state against the template file before
	// merging, so a mistake in it is reported where it is.
	check := &loader{file: t.file, opts: l.opts, templates: l.templates}
	var kept []field
	for _, f := range tfs {
		if f.key.Value == "type" && f.val.Kind == yaml.ScalarNode {
			f.val.Value = normType(f.val.Value)
		}
		if !slices.Contains(templateDropped, f.key.Value) {
			kept = append(kept, f)
		}
	}
	check.state(pk.key, mappingOf(pk.val, kept))
	l.probs = append(l.probs, check.probs...)
	if len(check.probs) > 0 {
		l.errf(useNode, "template %q has problems; see %s", name, t.file)
		return nil, false
	}

	return l.mergeTemplate(k, name, useNode, kept, own), true
}

// normType maps AWF's type alias command to step.
func normType(t string) string {
	if t == "command" {
		return TypeStep
	}
	return t
}

func hasField(fs []field, key string) bool {
	return slices.ContainsFunc(fs, func(f field) bool { return f.key.Value == key })
}

func mappingOf(like *yaml.Node, fs []field) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: like.Line, Column: like.Column}
	for _, f := range fs {
		m.Content = append(m.Content, f.key, f.val)
	}
	return m
}

// relocate moves n and its children to the position of at, so problems
// found in the merged state point at the using state's use_template line
// in the workflow file.
func relocate(n, at *yaml.Node) {
	if n == nil {
		return
	}
	n.Line, n.Column = at.Line, at.Column
	for _, c := range n.Content {
		relocate(c, at)
	}
}

// references reports whether the template's states mention
// {{parameters.name}}.
func (t *stepTemplate) references(name string) bool {
	found := false
	for _, f := range t.states {
		walkScalars(f.val, func(n *yaml.Node) {
			for _, m := range paramRefRE.FindAllStringSubmatch(n.Value, -1) {
				if m[1] == name {
					found = true
				}
			}
		})
	}
	return found
}

func walkScalars(n *yaml.Node, fn func(*yaml.Node)) {
	n = deref(n)
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode {
		fn(n)
	}
	for _, c := range n.Content {
		walkScalars(c, fn)
	}
}

// substitute returns a deep copy of n with every {{parameters.NAME}} in a
// scalar replaced by the value. A scalar that is exactly one reference
// takes the value's type (a number stays a number, a list a list); inside
// text, lists and mappings are written as JSON.
func (l *loader) substitute(n *yaml.Node, values map[string]any, tplName string) *yaml.Node {
	n = deref(n)
	c := *n
	c.Content = nil
	c.Alias = nil
	for _, x := range n.Content {
		c.Content = append(c.Content, l.substitute(x, values, tplName))
	}
	if c.Kind != yaml.ScalarNode || !strings.Contains(c.Value, "parameters.") {
		return &c
	}
	if m := paramRefRE.FindStringSubmatch(c.Value); m != nil && m[0] == strings.TrimSpace(c.Value) {
		v, ok := values[m[1]]
		if !ok {
			l.unknownParam(&c, m[1], values, tplName)
			return &c
		}
		var vn yaml.Node
		if err := vn.Encode(v); err != nil {
			l.errf(&c, "parameter %q: %v", m[1], err)
			return &c
		}
		relocate(&vn, &c)
		if vn.Kind == yaml.ScalarNode && vn.Tag == "!!str" {
			// keep the template's quoting style: a value that looks like a
			// number stays text when the template wrote text
			vn.Style = c.Style
		}
		return &vn
	}
	c.Value = paramRefRE.ReplaceAllStringFunc(c.Value, func(ref string) string {
		name := paramRefRE.FindStringSubmatch(ref)[1]
		v, ok := values[name]
		if !ok {
			l.unknownParam(&c, name, values, tplName)
			return ref
		}
		return paramText(v)
	})
	// The text is now a string whatever it looked like before.
	c.Tag = "!!str"
	return &c
}

func (l *loader) unknownParam(n *yaml.Node, name string, values map[string]any, tplName string) {
	var known []string
	for k := range values {
		known = append(known, k)
	}
	slices.Sort(known)
	l.errf(n, "{{parameters.%s}}: template %q declares no parameter %q (parameters: %s)%s", name, tplName, name, strings.Join(known, ", "), didYouMean(name, known))
}

// paramText is a parameter value as text: scalars as written, lists and
// mappings as JSON (never Go's map[...] notation).
func paramText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []any, map[string]any:
		b, err := json.Marshal(v)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// templateValues gives a template's parameters their values: those the
// using state gives, else the defaults; a missing required one is a
// problem.
func (l *loader) templateValues(t *stepTemplate, name string, useNode, paramsNode *yaml.Node) (map[string]any, bool) {
	given := map[string]any{}
	if paramsNode != nil {
		pfs, ok := l.mapping(paramsNode, "parameters")
		if !ok {
			return nil, false
		}
		for _, f := range pfs {
			given[f.key.Value] = l.value(f.val, "parameters."+f.key.Value, false)
			if _, declared := t.param(f.key.Value); !declared && !t.references(f.key.Value) {
				msg := fmt.Sprintf("template %q has no parameter %q (parameters: %s)", name, f.key.Value, strings.Join(t.paramNames(), ", "))
				l.errf(f.key, "%s%s", msg, didYouMean(f.key.Value, t.paramNames()))
			}
		}
	} else {
		paramsNode = useNode
	}
	values := map[string]any{}
	missing := false
	for _, p := range t.params {
		if v, ok := given[p.name]; ok {
			values[p.name] = v
		} else if p.hasDef {
			values[p.name] = p.def
		} else if p.required {
			l.errf(paramsNode, "template %q is missing required parameter %q", name, p.name)
			missing = true
		} else {
			values[p.name] = ""
		}
	}
	if missing {
		return nil, false
	}
	for k, v := range given {
		if _, ok := values[k]; !ok {
			values[k] = v
		}
	}
	return values, true
}

// mergeTemplate merges a template's state (kept) with the using state's
// own fields: the using state's fields win, except that its type must
// agree with the template's and its command is the placeholder AWF makes
// users write (AWF runs the template's command).
func (l *loader) mergeTemplate(k *yaml.Node, name string, useNode *yaml.Node, kept, own []field) []field {
	tplType := ""
	for _, f := range kept {
		if f.key.Value == "type" {
			tplType = f.val.Value
		}
	}
	tplRuns := hasField(kept, "command") || hasField(kept, "script_file")
	var use []field
	for _, f := range own {
		switch f.key.Value {
		case "type":
			if normType(f.val.Value) != normType(tplType) {
				l.errf(f.val, "state %q is of type %q but its template %q is of type %q", k.Value, f.val.Value, name, tplType)
			}
			continue
		case "command", "script_file":
			if tplRuns {
				continue
			}
		}
		use = append(use, f)
	}
	out := make([]field, 0, len(kept)+len(use))
	for _, f := range kept {
		if hasField(use, f.key.Value) {
			continue
		}
		relocate(f.key, useNode)
		relocate(f.val, useNode)
		out = append(out, f)
	}
	return append(out, use...)
}
