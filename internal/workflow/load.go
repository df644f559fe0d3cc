package workflow

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"

	"github.com/reelhq/reel/internal/agentfiles"
	"github.com/reelhq/reel/internal/errcode"
)

// Options adjust loading.
type Options struct {
	// CustomType reports whether a state type outside the built-in set is a
	// known custom step type. Nil accepts every such type.
	CustomType func(typ string) bool
	// CustomTypes lists the known custom types for "did you mean"
	// suggestions when CustomType refuses one.
	CustomTypes []string
	// ProjectDir is the project root, where .reel/ and .awf/ hold the
	// project's templates, prompts and scripts ("" when unknown).
	ProjectDir string
	// Pack is the installed pack the file belongs to (nil for other
	// workflows): its prompts, scripts and templates are looked up in
	// the pack, and the workflow's Pack is set.
	Pack *Pack
	// FindWorkflow, when set, lets validation check that the workflow a
	// call_workflow names (when it holds no template) exists, as the
	// run will look it up from the calling workflow.
	FindWorkflow func(ref string, from *Workflow) (string, error)
	// AgentFiles, when set, finds the skills and roles agent states name,
	// so that a missing one is a load problem; nil leaves them unchecked.
	AgentFiles *agentfiles.Finder
	// AgentOptions, when set, checks the options of an agent state whose
	// provider is known at load time (options holding templates are left
	// out).
	AgentOptions func(provider string, options map[string]any) error
}

// maxFileSize bounds what Load reads: workflow files are small, and a
// multi-megabyte one is almost certainly the wrong file.
const maxFileSize = 8 << 20

// Load reads and validates the workflow file at path. An invalid file gives
// a Problems error listing everything wrong with it (its warnings
// included); a valid one may still carry Warnings.
func Load(path string, opts Options) (*Workflow, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open workflow %s: %w", path, err)
	}
	if fi.Size() > maxFileSize {
		return nil, fmt.Errorf("workflow %s: %d bytes exceeds the %d byte limit", path, fi.Size(), maxFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read workflow %s: %w", path, err)
	}
	return Parse(data, path, opts)
}

// Parse loads a workflow from data; file names it in problems.
func Parse(data []byte, file string, opts Options) (*Workflow, error) {
	l := &loader{file: file, opts: opts}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, Problems{l.yamlError(data, err)}
	}
	wf := l.workflow(&root)
	l.validate(wf)
	if len(l.probs) > 0 {
		// the warnings go along: whoever fixes the errors sees them too
		return nil, append(l.probs, l.warnings...).sorted()
	}
	wf.Warnings = l.warnings.sorted()
	digests(wf, data, &root)
	return wf, nil
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// yamlError turns a yaml.v3 syntax error into a Problem. yaml.v3 reports
// only the line; the column given is that line's first non-blank character.
func (l *loader) yamlError(data []byte, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimSpace(strings.Replace(msg, m[0]+":", "", 1))
	}
	col := 1
	lines := strings.Split(string(data), "\n")
	if line >= 1 && line <= len(lines) {
		text := lines[line-1]
		col = len(text) - len(strings.TrimLeft(text, " \t")) + 1
	}
	return Problem{File: l.file, Pos: Pos{line, col}, Msg: "invalid YAML: " + msg, Code: errcode.WorkflowParseYAMLSyntax}
}

type loader struct {
	file  string
	opts  Options
	probs Problems
	nodes int // values converted so far, bounded by maxValueNodes
	// tooDeep is set once a value deeper than maxValueDepth was reported
	tooDeep bool
	// step templates read so far, and the chain being expanded
	templates map[string]*stepTemplate
	tplStack  []string
	warnings  Problems
	// computed once per file by the reference checks (refs.go)
	flow       *flowGraph
	loopStates map[string]bool
	// tmplBase gives the file's templates (see newTemplateBase)
	tmplBase *template.Template
}

func pos(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

func (l *loader) errf(n *yaml.Node, format string, args ...any) {
	l.probs = append(l.probs, Problem{File: l.file, Pos: pos(n), Msg: fmt.Sprintf(format, args...)})
}

// oneOf reports whether value is one of allowed, and records a problem at
// n naming them (and the likely intended one) when it is not.
func (l *loader) oneOf(n *yaml.Node, what, value string, allowed []string) bool {
	if contains(allowed, value) {
		return true
	}
	l.errf(n, "%s %q is not one of %s%s", what, value, strings.Join(allowed, ", "), didYouMean(value, allowed))
	return false
}

func (l *loader) warnAt(p Pos, format string, args ...any) {
	l.warnings = append(l.warnings, Problem{File: l.file, Pos: p, Msg: fmt.Sprintf(format, args...), Warning: true})
}

func (l *loader) errAt(p Pos, format string, args ...any) {
	l.probs = append(l.probs, Problem{File: l.file, Pos: p, Msg: fmt.Sprintf(format, args...)})
}

// warnf records a warning: the file loads, but n does not do what it
// seems to.
func (l *loader) warnf(n *yaml.Node, format string, args ...any) {
	l.warnAt(pos(n), format, args...)
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

type field struct {
	key *yaml.Node
	val *yaml.Node
}

// mapping returns the key/value pairs of a mapping node, reporting a wrong
// kind and duplicate keys.
func (l *loader) mapping(n *yaml.Node, what string) ([]field, bool) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			return nil, true
		}
		l.errf(n, "%s must be a mapping, got %s", what, kindName(n))
		return nil, false
	}
	var out []field
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			l.errf(k, "%s: keys must be strings", what)
			continue
		}
		if k.Tag == "!!merge" {
			l.errf(k, "%s: YAML merge keys (<<) are not supported", what)
			continue
		}
		if seen[k.Value] {
			l.errf(k, "%s: duplicate key %q", what, k.Value)
			continue
		}
		seen[k.Value] = true
		out = append(out, field{k, deref(v)})
	}
	return out, true
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!int":
			return "an integer"
		case "!!bool":
			return "a boolean"
		case "!!float":
			return "a number"
		}
		return fmt.Sprintf("the string %q", truncate(n.Value, 40))
	}
	return "something else"
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// unknownField reports a key outside allowed, suggesting the closest one.
func (l *loader) unknownField(k *yaml.Node, what string, allowed []string, elsewhere string) {
	msg := fmt.Sprintf("unknown field %q in %s", k.Value, what)
	if elsewhere != "" {
		msg = fmt.Sprintf("field %q is not valid in %s (it belongs to %s)", k.Value, what, elsewhere)
	}
	msg += didYouMean(k.Value, allowed)
	l.probs = append(l.probs, Problem{File: l.file, Pos: pos(k), Msg: msg, Code: errcode.WorkflowParseUnknownField})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ErrNotFound reports that a workflow name resolved to no file.
var ErrNotFound = errors.New("workflow not found")

var topFields = []string{"name", "version", "description", "author", "tags", "env", "inputs", "outputs", "states", "hooks"}

// document returns the top-level mapping of a parsed file (a workflow or
// a step template).
func (l *loader) document(root *yaml.Node, what string) (*yaml.Node, []field, bool) {
	if root.Kind == 0 || len(root.Content) == 0 {
		l.errAt(Pos{1, 1}, "empty %s file", what)
		return nil, nil, false
	}
	doc := deref(root.Content[0])
	fs, ok := l.mapping(doc, what)
	return doc, fs, ok
}

// ignoredTop are top-level keys AWF accepts (or documents) without acting
// on them; reel loads them with a warning rather than refusing the file.
var ignoredTop = map[string]string{
	"output":     "AWF documents it but does not implement it",
	"monitoring": "AWF documents it but does not implement it",
	"loop":       "AWF documents it but does not implement it",
	"plugins":    "reel's plugins are executable step types declared in .reel/config.yaml",
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (l *loader) workflow(root *yaml.Node) *Workflow {
	wf := &Workflow{File: l.file, States: map[string]*State{}, Pack: l.opts.Pack}
	doc, fs, ok := l.document(root, "workflow")
	if !ok {
		return wf
	}
	var haveName, haveStates bool
	for _, f := range fs {
		switch f.key.Value {
		case "name":
			wf.Name, haveName = l.str(f.val, "name")
			if haveName && strings.TrimSpace(wf.Name) == "" {
				l.errf(f.val, "name is empty")
			}
		case "version":
			if f.val.Kind == yaml.ScalarNode && !isNull(f.val) {
				wf.Version = f.val.Value
			} else {
				l.errf(f.val, "version must be a string, got %s", kindName(f.val))
			}
		case "description":
			wf.Description, _ = l.str(f.val, "description")
		case "author":
			wf.Author, _ = l.str(f.val, "author")
		case "tags":
			wf.Tags = l.strList(f.val, "tags")
		case "env":
			wf.Env = l.strList(f.val, "env")
			if f.val.Kind == yaml.SequenceNode {
				for _, c := range f.val.Content {
					if c = deref(c); c.Kind == yaml.ScalarNode && !envNameRE.MatchString(c.Value) {
						l.errf(c, "env: %q is not an environment variable name", c.Value)
					}
				}
			}
		case "inputs":
			wf.Inputs = l.inputs(f.val)
		case "outputs":
			wf.Outputs = l.outputs(f.val)
		case "states":
			haveStates = true
			l.states(wf, f.val)
		case "hooks":
			wf.Hooks = l.workflowHooks(f.val)
		default:
			if why, ok := ignoredTop[f.key.Value]; ok {
				l.warnf(f.key, "%q is ignored: %s", f.key.Value, why)
				continue
			}
			l.unknownField(f.key, "the workflow", topFields, "")
		}
	}
	if !haveName {
		l.errf(doc, "missing required field \"name\"")
	}
	if !haveStates {
		l.errf(doc, "missing required field \"states\"")
	}
	return wf
}
