package workflow

import (
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/template/parse"
	"time"

	"gopkg.in/yaml.v3"
)

// Options adjust loading.
type Options struct {
	// CustomType reports whether a state type outside the built-in set is a
	// known custom step type. Nil accepts every such type.
	CustomType func(typ string) bool
	// CustomTypes lists the known custom types for "did you mean"
	// suggestions when CustomType refuses one.
	CustomTypes []string
	// ProjectDir, when set, lets validation check that call_workflow
	// targets exist (beside the file or in ProjectDir/.reel/workflows).
	ProjectDir string
}

// maxFileSize bounds what Load reads: workflow files are small, and a
// multi-megabyte one is almost certainly the wrong file.
const maxFileSize = 8 << 20

// Load reads and validates the workflow file at path. An invalid file gives
// a Problems error listing everything wrong with it.
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
		return nil, l.probs.sorted()
	}
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
	return Problem{File: l.file, Pos: Pos{line, col}, Msg: "invalid YAML: " + msg}
}

type loader struct {
	file  string
	opts  Options
	probs Problems
	nodes int // values converted so far, bounded by maxValueNodes
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

func (l *loader) errAt(p Pos, format string, args ...any) {
	l.probs = append(l.probs, Problem{File: l.file, Pos: p, Msg: fmt.Sprintf(format, args...)})
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
	l.errf(k, "%s", msg)
}

func (l *loader) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.errf(n, "%s must be a string, got %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (l *loader) intv(n *yaml.Node, what string) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		l.errf(n, "%s must be an integer, got %s", what, kindName(n))
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 0, 32)
	if err != nil {
		l.errf(n, "%s: %q is out of range", what, n.Value)
		return 0, false
	}
	return int(v), true
}

func (l *loader) floatv(n *yaml.Node, what string) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		l.errf(n, "%s must be a number, got %s", what, kindName(n))
		return 0, false
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		l.errf(n, "%s: %q is not a finite number", what, n.Value)
		return 0, false
	}
	return v, true
}

func (l *loader) boolv(n *yaml.Node, what string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		l.errf(n, "%s must be true or false, got %s", what, kindName(n))
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		l.errf(n, "%s: %v", what, err)
		return false, false
	}
	return b, true
}

func (l *loader) strList(n *yaml.Node, what string) []string {
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "%s must be a list of names, got %s", what, kindName(n))
		return nil
	}
	var out []string
	for _, c := range n.Content {
		c = deref(c)
		if s, ok := l.str(c, what+" entry"); ok {
			out = append(out, s)
		}
	}
	return out
}

// duration accepts integer seconds or a Go duration string.
func (l *loader) duration(n *yaml.Node, what string) time.Duration {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		l.errf(n, "%s must be integer seconds or a duration such as \"1m30s\", got %s", what, kindName(n))
		return 0
	}
	if n.Tag == "!!int" {
		v, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil || v < 0 || v > math.MaxInt64/int64(time.Second) {
			l.errf(n, "%s: %q is not a valid number of seconds", what, n.Value)
			return 0
		}
		return time.Duration(v) * time.Second
	}
	if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil && v >= 0 && v <= math.MaxInt64/int64(time.Second) {
		return time.Duration(v) * time.Second
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		l.errf(n, "%s: %q is not a duration (use seconds or a Go duration such as \"1m30s\")", what, n.Value)
		return 0
	}
	if d < 0 {
		l.errf(n, "%s: %q is negative", what, n.Value)
		return 0
	}
	return d
}

func (l *loader) template(n *yaml.Node, what string) *Template {
	s, ok := l.str(n, what)
	if !ok {
		return nil
	}
	t, err := parseTemplate(s, pos(n))
	if err != nil {
		l.errf(n, "%s: bad template: %v", what, cleanTemplateErr(err))
		return nil
	}
	return t
}

func cleanTemplateErr(err error) string {
	return strings.TrimPrefix(err.Error(), "template: :")
}

func (l *loader) expr(n *yaml.Node, what string, asBool bool) *Expr {
	s, ok := l.str(n, what)
	if !ok {
		return nil
	}
	if strings.TrimSpace(s) == "" {
		l.errf(n, "%s is empty", what)
		return nil
	}
	prog, err := compileExpr(s, asBool)
	if err != nil {
		l.errf(n, "%s: bad expression: %s", what, firstLine(err.Error()))
		return nil
	}
	return &Expr{Source: s, Pos: pos(n), prog: prog}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// value converts a node to plain Go values; with templates, string leaves
// become *Template.
func (l *loader) value(n *yaml.Node, what string, templates bool) any {
	return l.valueDepth(n, what, templates, 0)
}

// Bounds on free-form values, so that a recursive alias or an alias bomb
// gives a problem instead of a hang.
const (
	maxValueDepth = 64
	maxValueNodes = 100000
)

func (l *loader) valueDepth(n *yaml.Node, what string, templates bool, depth int) any {
	if depth > maxValueDepth {
		l.errf(n, "%s is nested more than %d levels deep (a recursive alias?)", what, maxValueDepth)
		return nil
	}
	l.nodes++
	if l.nodes > maxValueNodes {
		if l.nodes == maxValueNodes+1 {
			l.errf(n, "%s expands to more than %d values (aliases?)", what, maxValueNodes)
		}
		return nil
	}
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		fs, _ := l.mapping(n, what)
		m := make(map[string]any, len(fs))
		for _, f := range fs {
			m[f.key.Value] = l.valueDepth(f.val, what, templates, depth+1)
		}
		return m
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, l.valueDepth(c, what, templates, depth+1))
		}
		return out
	case yaml.ScalarNode:
		if templates && n.Tag == "!!str" {
			return l.template(n, what)
		}
		var v any
		if err := n.Decode(&v); err != nil {
			l.errf(n, "%s: %v", what, err)
			return nil
		}
		return v
	}
	return nil
}

var topFields = []string{"name", "version", "description", "inputs", "outputs", "states"}

func (l *loader) workflow(root *yaml.Node) *Workflow {
	wf := &Workflow{File: l.file, States: map[string]*State{}}
	if root.Kind == 0 || len(root.Content) == 0 {
		l.errAt(Pos{1, 1}, "empty workflow file")
		return wf
	}
	doc := deref(root.Content[0])
	fs, ok := l.mapping(doc, "workflow")
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
		case "inputs":
			wf.Inputs = l.inputs(f.val)
		case "outputs":
			wf.Outputs = l.outputs(f.val)
		case "states":
			haveStates = true
			l.states(wf, f.val)
		default:
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

var inputFields = []string{"name", "type", "required", "default", "validation", "description"}
var validationFields = []string{"pattern", "enum", "min", "max", "file_exists"}

func (l *loader) inputs(n *yaml.Node) []Input {
	if isNull(n) {
		return nil
	}
	var out []Input
	seen := map[string]bool{}
	l.list(n, "inputs", "input", func(c *yaml.Node, fs []field) {
		in := Input{Type: "string", Pos: pos(c)}
		for _, f := range fs {
			switch f.key.Value {
			case "name":
				in.Name, _ = l.str(f.val, "input name")
			case "type":
				if s, ok := l.str(f.val, "input type"); ok {
					if l.oneOf(f.val, "input type", s, []string{"string", "integer", "boolean"}) {
						in.Type = s
					}
				}
			case "required":
				in.Required, _ = l.boolv(f.val, "required")
			case "default":
				if f.val.Kind != yaml.ScalarNode {
					l.errf(f.val, "default must be a scalar, got %s", kindName(f.val))
				} else if !isNull(f.val) {
					v := f.val.Value
					in.Default = &v
				}
			case "validation":
				in.Validation = l.inputValidation(f.val)
			case "description":
				l.str(f.val, "description")
			default:
				l.unknownField(f.key, "an input", inputFields, "")
			}
		}
		if in.Name == "" {
			l.errf(c, "input is missing its name")
		} else if seen[in.Name] {
			l.errf(c, "duplicate input %q", in.Name)
		}
		seen[in.Name] = true
		if in.Default != nil {
			if err := CheckInputValue(in, *in.Default); err != nil {
				l.errf(c, "default of input %q: %v", in.Name, err)
			}
		}
		out = append(out, in)
	})
	return out
}

func (l *loader) inputValidation(n *yaml.Node) *InputValidation {
	fs, ok := l.mapping(n, "validation")
	if !ok {
		return nil
	}
	v := &InputValidation{}
	for _, f := range fs {
		switch f.key.Value {
		case "pattern":
			if s, ok := l.str(f.val, "pattern"); ok {
				if _, err := regexp.Compile(s); err != nil {
					l.errf(f.val, "pattern: %v", err)
				} else {
					v.Pattern = s
				}
			}
		case "enum":
			if f.val.Kind != yaml.SequenceNode {
				l.errf(f.val, "enum must be a list, got %s", kindName(f.val))
				continue
			}
			for _, c := range f.val.Content {
				c = deref(c)
				if c.Kind != yaml.ScalarNode {
					l.errf(c, "enum entries must be scalars")
					continue
				}
				v.Enum = append(v.Enum, c.Value)
			}
		case "min":
			if x, ok := l.floatv(f.val, "min"); ok {
				v.Min = &x
			}
		case "max":
			if x, ok := l.floatv(f.val, "max"); ok {
				v.Max = &x
			}
		case "file_exists":
			v.FileExists, _ = l.boolv(f.val, "file_exists")
		default:
			l.unknownField(f.key, "validation", validationFields, "")
		}
	}
	return v
}

var outputFields = []string{"name", "from", "description"}

func (l *loader) outputs(n *yaml.Node) []Output {
	if isNull(n) {
		return nil
	}
	var out []Output
	l.list(n, "outputs", "output", func(c *yaml.Node, fs []field) {
		o := Output{Pos: pos(c)}
		for _, f := range fs {
			switch f.key.Value {
			case "name":
				o.Name, _ = l.str(f.val, "output name")
			case "from":
				o.From = l.expr(f.val, "output from", false)
			case "description":
				l.str(f.val, "description")
			default:
				l.unknownField(f.key, "an output", outputFields, "")
			}
		}
		if o.Name == "" {
			l.errf(c, "output is missing its name")
		}
		if o.From == nil {
			l.errf(c, "output %q is missing \"from\"", o.Name)
		}
		out = append(out, o)
	})
	return out
}

// Fields accepted by each state type, besides the flow fields.
var typeFields = map[string][]string{
	TypeStep:         {"command", "script_file", "dir", "timeout", "retry", "continue_on_error"},
	TypeAgent:        {"provider", "prompt", "prompt_file", "system_prompt", "options", "output_format", "timeout", "retry", "conversation"},
	TypeTerminal:     {"status", "message"},
	TypeParallel:     {"parallel", "strategy", "max_concurrent"},
	TypeForEach:      {"items", "body", "max_iterations", "break_when", "on_complete"},
	TypeWhile:        {"while", "body", "max_iterations", "break_when", "on_complete"},
	TypeOperation:    {"operation", "inputs", "retry"},
	TypeCallWorkflow: {"call_workflow", "workflow", "inputs", "outputs", "timeout"},
}

var flowFields = []string{"type", "description", "on_success", "on_failure", "transitions"}

// BuiltinTypes lists the state types with built-in meaning.
var BuiltinTypes = []string{TypeStep, TypeAgent, TypeTerminal, TypeParallel, TypeForEach, TypeWhile, TypeOperation, TypeCallWorkflow}

func allowedFields(typ string) []string {
	f, ok := typeFields[typ]
	if !ok {
		f = []string{"config"}
	}
	if typ == TypeTerminal {
		return append([]string{"type", "description"}, f...)
	}
	return append(append([]string{}, flowFields...), f...)
}

// ownerOf names the state types a field belongs to, for "not valid here".
func ownerOf(key string) string {
	var owners []string
	for _, t := range BuiltinTypes {
		for _, f := range typeFields[t] {
			if f == key {
				owners = append(owners, t)
			}
		}
	}
	if key == "config" {
		owners = append(owners, "custom step types")
	}
	for _, f := range flowFields[2:] {
		if f == key {
			owners = append(owners, "non-terminal states")
		}
	}
	return strings.Join(owners, ", ")
}

func (l *loader) states(wf *Workflow, n *yaml.Node) {
	fs, ok := l.mapping(n, "states")
	if !ok {
		return
	}
	var initial *yaml.Node
	for _, f := range fs {
		if f.key.Value == "initial" {
			initial = f.val
			continue
		}
		if s := l.state(f.key, f.val); s != nil {
			wf.States[s.Name] = s
			wf.Order = append(wf.Order, s.Name)
		}
	}
	if initial == nil {
		l.errf(n, "states: missing required field \"initial\" (the first state)")
		return
	}
	if s, ok := l.str(initial, "initial"); ok {
		wf.Initial = s
		if _, exists := wf.States[s]; !exists {
			l.missingState(initial, "initial", s, wf)
		}
	}
}

var stateNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func (l *loader) state(k, n *yaml.Node) *State {
	name := k.Value
	if !stateNameRE.MatchString(name) {
		l.errf(k, "state name %q must start with a letter or _ and hold only letters, digits, _ and - (it becomes part of dot paths)", name)
	}
	fs, ok := l.mapping(n, "state "+name)
	if !ok {
		return nil
	}
	s := &State{Name: name, Pos: pos(k), MaxIterations: DefaultMaxIterations, Strategy: StrategyAllSucceed}
	for _, f := range fs {
		if f.key.Value == "type" {
			s.Type, _ = l.str(f.val, "type")
			if s.Type != "" {
				l.checkType(f.val, s.Type)
			}
		}
	}
	if s.Type == "" {
		l.errf(k, "state %q is missing its type", name)
		return s
	}
	allowed := allowedFields(s.Type)
	what := fmt.Sprintf("%s state %q", s.Type, name)
	var callNested, callFlat bool
	for _, f := range fs {
		key, v := f.key.Value, f.val
		if !contains(allowed, key) {
			l.unknownField(f.key, what, allowed, ownerOf(key))
			continue
		}
		switch key {
		case "type", "description":
		case "command":
			s.Command = orPlaceholder(l.template(v, "command"))
		case "script_file":
			s.ScriptFile, _ = l.str(v, "script_file")
		case "dir":
			s.Dir = l.template(v, "dir")
		case "timeout":
			s.Timeout = l.duration(v, "timeout")
		case "retry":
			s.Retry = l.retry(v)
		case "continue_on_error":
			s.ContinueOnError, _ = l.boolv(v, "continue_on_error")
		case "provider":
			s.Provider, _ = l.str(v, "provider")
		case "prompt":
			s.Prompt = orPlaceholder(l.template(v, "prompt"))
		case "prompt_file":
			s.PromptFile, _ = l.str(v, "prompt_file")
		case "system_prompt":
			s.SystemPrompt = l.template(v, "system_prompt")
		case "options":
			if m, ok := l.value(v, "options", false).(map[string]any); ok {
				s.Options = m
			} else if !isNull(v) {
				l.errf(v, "options must be a mapping, got %s", kindName(v))
			}
		case "output_format":
			if of, ok := l.str(v, "output_format"); ok {
				if of != "json" && of != "text" {
					l.errf(v, "output_format must be json or text, got %q", of)
				}
				s.OutputFormat = of
			}
		case "conversation":
			s.Conversation = l.conversation(v)
		case "status":
			if st, ok := l.str(v, "status"); ok {
				if st != "success" && st != "failure" {
					l.errf(v, "status must be success or failure, got %q", st)
				}
				s.Status = st
			}
		case "message":
			s.Message = l.template(v, "message")
		case "parallel":
			s.Parallel = append([]string{}, l.strList(v, "parallel")...)
			if v.Kind == yaml.SequenceNode && len(s.Parallel) == 0 {
				l.errf(v, "parallel lists no branches")
			}
		case "strategy":
			if st, ok := l.str(v, "strategy"); ok {
				l.oneOf(v, "strategy", st, []string{StrategyAllSucceed, StrategyAnySucceed, StrategyBestEffort})
				s.Strategy = st
			}
		case "max_concurrent":
			if x, ok := l.intv(v, "max_concurrent"); ok {
				if x < 0 {
					l.errf(v, "max_concurrent must not be negative")
				}
				s.MaxConcurrent = x
			}
		case "items":
			if v.Kind == yaml.SequenceNode {
				items, _ := l.value(v, "items", false).([]any)
				s.ItemsLiteral = items
				if s.ItemsLiteral == nil {
					s.ItemsLiteral = []any{}
				}
			} else {
				s.Items = orPlaceholder(l.template(v, "items"))
			}
		case "body":
			s.Body = append([]string{}, l.strList(v, "body")...)
			if v.Kind == yaml.SequenceNode && len(s.Body) == 0 {
				l.errf(v, "body lists no states")
			}
		case "max_iterations":
			if x, ok := l.intv(v, "max_iterations"); ok {
				if x < 1 || x > MaxMaxIterations {
					l.errf(v, "max_iterations must be between 1 and %d, got %d", MaxMaxIterations, x)
				}
				s.MaxIterations = x
			}
		case "break_when":
			s.BreakWhen = l.expr(v, "break_when", true)
		case "on_complete":
			s.OnComplete, _ = l.str(v, "on_complete")
		case "while":
			s.While = l.expr(v, "while", true)
		case "operation":
			s.Operation, _ = l.str(v, "operation")
		case "inputs":
			if s.Type == TypeCallWorkflow {
				callFlat = true
				s.call().Inputs = l.callInputs(v)
			} else if m, ok := l.value(v, "inputs", true).(map[string]any); ok {
				s.Inputs = m
			} else if !isNull(v) {
				l.errf(v, "inputs must be a mapping, got %s", kindName(v))
			}
		case "call_workflow":
			callNested = true
			l.callWorkflow(s, v)
		case "workflow":
			callFlat = true
			s.call().Workflow, _ = l.str(v, "workflow")
		case "outputs":
			callFlat = true
			s.call().Outputs = l.callOutputs(v)
		case "config":
			if m, ok := l.value(v, "config", false).(map[string]any); ok {
				s.Config = m
			} else if !isNull(v) {
				l.errf(v, "config must be a mapping, got %s", kindName(v))
			}
		case "on_success":
			s.OnSuccess, _ = l.str(v, "on_success")
		case "on_failure":
			s.OnFailure = l.onFailure(v)
		case "transitions":
			s.Transitions = l.transitions(v)
		}
	}
	if s.Type == TypeCallWorkflow && callNested && callFlat {
		l.errf(k, "state %q mixes the nested call_workflow form with flat workflow/inputs/outputs keys; use one form", name)
	}
	if s.Type == TypeCallWorkflow && s.Call != nil && s.Timeout > 0 && s.Call.Timeout == 0 {
		s.Call.Timeout = s.Timeout
	}
	l.requireFields(k, s)
	for _, t := range []struct {
		what string
		t    *Template
	}{{"prompt", s.Prompt}, {"system_prompt", s.SystemPrompt}} {
		if usesTurn(t.t) {
			l.errAt(t.t.Pos, "%s: .turn is set only in conversation follow-ups (it is the previous turn's reply)", t.what)
		}
	}
	return s
}

// orPlaceholder keeps a field marked present when its template was bad
// (already reported), so that "missing field" is not reported on top.
func orPlaceholder(t *Template) *Template {
	if t == nil {
		return &Template{}
	}
	return t
}

func (s *State) call() *CallWorkflow {
	if s.Call == nil {
		s.Call = &CallWorkflow{}
	}
	return s.Call
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (l *loader) checkType(n *yaml.Node, typ string) {
	if contains(BuiltinTypes, typ) {
		return
	}
	if l.opts.CustomType == nil || l.opts.CustomType(typ) {
		return
	}
	msg := fmt.Sprintf("unknown state type %q (built-in: %s", typ, strings.Join(BuiltinTypes, ", "))
	if len(l.opts.CustomTypes) > 0 {
		msg += "; custom: " + strings.Join(l.opts.CustomTypes, ", ")
	}
	msg += ")"
	msg += didYouMean(typ, append(append([]string{}, BuiltinTypes...), l.opts.CustomTypes...))
	l.errf(n, "%s", msg)
}

func (l *loader) requireFields(k *yaml.Node, s *State) {
	switch s.Type {
	case TypeStep:
		if (s.Command == nil) == (s.ScriptFile == "") {
			l.errf(k, "step %q needs exactly one of command or script_file", s.Name)
		}
	case TypeAgent:
		providers := []string{"claude", "codex", "gemini", "github_copilot", "openai_compatible"}
		if s.Provider == "" {
			l.errf(k, "agent %q is missing provider", s.Name)
		} else if !contains(providers, s.Provider) {
			msg := fmt.Sprintf("agent %q: unknown provider %q (one of %s)", s.Name, s.Provider, strings.Join(providers, ", "))
			msg += didYouMean(s.Provider, providers)
			l.errf(k, "%s", msg)
		}
		if (s.Prompt == nil) == (s.PromptFile == "") {
			l.errf(k, "agent %q needs exactly one of prompt or prompt_file", s.Name)
		}
	case TypeTerminal:
		if s.Status == "" {
			s.Status = "success"
		}
	case TypeParallel:
		if s.Parallel == nil {
			l.errf(k, "parallel state %q is missing its parallel list of branches", s.Name)
		}
	case TypeForEach:
		if s.Items == nil && s.ItemsLiteral == nil {
			l.errf(k, "for_each %q is missing items", s.Name)
		}
		if s.Body == nil {
			l.errf(k, "for_each %q is missing body", s.Name)
		}
	case TypeWhile:
		if s.While == nil {
			l.errf(k, "while %q is missing its while expression", s.Name)
		}
		if s.Body == nil {
			l.errf(k, "while %q is missing body", s.Name)
		}
	case TypeOperation:
		if s.Operation == "" {
			l.errf(k, "operation state %q is missing operation", s.Name)
		} else if s.Operation != "http.request" {
			l.errf(k, "operation %q is not supported (supported: http.request)", s.Operation)
		} else if _, ok := s.Inputs["url"]; !ok {
			l.errf(k, "operation %q: http.request needs inputs.url", s.Name)
		}
	case TypeCallWorkflow:
		if s.Call == nil || s.Call.Workflow == "" {
			l.errf(k, "call_workflow %q is missing workflow", s.Name)
		}
	}
	if (s.Type == TypeForEach || s.Type == TypeWhile) && s.OnComplete != "" && s.OnSuccess != "" && s.OnComplete != s.OnSuccess {
		l.errf(k, "%s %q sets both on_complete and on_success to different states", s.Type, s.Name)
	}
}

var retryFields = []string{"max_attempts", "initial_delay", "max_delay", "backoff", "multiplier", "jitter", "retryable_exit_codes"}

func (l *loader) retry(n *yaml.Node) *Retry {
	fs, ok := l.mapping(n, "retry")
	if !ok {
		return nil
	}
	r := &Retry{MaxAttempts: 1, Backoff: "constant", Multiplier: 2}
	for _, f := range fs {
		v := f.val
		switch f.key.Value {
		case "max_attempts":
			if x, ok := l.intv(v, "max_attempts"); ok {
				if x < 1 || x > 100 {
					l.errf(v, "max_attempts must be between 1 and 100, got %d", x)
				}
				r.MaxAttempts = x
			}
		case "initial_delay":
			r.InitialDelay = l.duration(v, "initial_delay")
		case "max_delay":
			r.MaxDelay = l.duration(v, "max_delay")
		case "backoff":
			if b, ok := l.str(v, "backoff"); ok {
				l.oneOf(v, "backoff", b, []string{"constant", "linear", "exponential"})
				r.Backoff = b
			}
		case "multiplier":
			if x, ok := l.floatv(v, "multiplier"); ok {
				if x < 1 {
					l.errf(v, "multiplier must be at least 1, got %v", x)
				}
				r.Multiplier = x
			}
		case "jitter":
			if x, ok := l.floatv(v, "jitter"); ok {
				if x < 0 || x > 1 {
					l.errf(v, "jitter must be between 0 and 1, got %v", x)
				}
				r.Jitter = x
			}
		case "retryable_exit_codes":
			if v.Kind != yaml.SequenceNode {
				l.errf(v, "retryable_exit_codes must be a list of integers, got %s", kindName(v))
				continue
			}
			for _, c := range v.Content {
				if x, ok := l.intv(deref(c), "retryable_exit_codes entry"); ok {
					r.RetryableExitCodes = append(r.RetryableExitCodes, x)
				}
			}
		default:
			l.unknownField(f.key, "retry", retryFields, "")
		}
	}
	return r
}

func (l *loader) onFailure(n *yaml.Node) *FailureTarget {
	if n.Kind == yaml.ScalarNode {
		s, ok := l.str(n, "on_failure")
		if !ok {
			return nil
		}
		return &FailureTarget{State: s}
	}
	fs, ok := l.mapping(n, "on_failure")
	if !ok {
		return nil
	}
	ft := &FailureTarget{Inline: true, Status: 1}
	for _, f := range fs {
		switch f.key.Value {
		case "message":
			ft.Message = l.template(f.val, "on_failure message")
		case "status":
			if x, ok := l.intv(f.val, "on_failure status"); ok {
				if x < 1 || x > 255 {
					l.errf(f.val, "on_failure status must be an exit status between 1 and 255, got %d", x)
				}
				ft.Status = x
			}
		default:
			l.unknownField(f.key, "on_failure", []string{"message", "status"}, "")
		}
	}
	return ft
}

func (l *loader) transitions(n *yaml.Node) []Transition {
	var out []Transition
	l.list(n, "transitions", "transition", func(c *yaml.Node, fs []field) {
		t := Transition{Pos: pos(c)}
		for _, f := range fs {
			switch f.key.Value {
			case "when":
				t.When = l.expr(f.val, "when", true)
			case "goto":
				t.Goto, _ = l.str(f.val, "goto")
				t.Pos = pos(f.val)
			default:
				l.unknownField(f.key, "a transition", []string{"when", "goto"}, "")
			}
		}
		if t.Goto == "" {
			l.errf(c, "transition is missing goto")
		}
		out = append(out, t)
	})
	return out
}

// list calls item for each mapping in the sequence n (the "what" field),
// reporting n if it is not a list and any element that is not a mapping.
func (l *loader) list(n *yaml.Node, what, itemName string, item func(c *yaml.Node, fs []field)) {
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "%s must be a list, got %s", what, kindName(n))
		return
	}
	for _, c := range n.Content {
		c = deref(c)
		if fs, ok := l.mapping(c, itemName); ok {
			item(c, fs)
		}
	}
}

func (l *loader) callWorkflow(s *State, n *yaml.Node) {
	fs, ok := l.mapping(n, "call_workflow")
	if !ok {
		return
	}
	c := s.call()
	for _, f := range fs {
		switch f.key.Value {
		case "workflow":
			c.Workflow, _ = l.str(f.val, "workflow")
		case "inputs":
			c.Inputs = l.callInputs(f.val)
		case "outputs":
			c.Outputs = l.callOutputs(f.val)
		case "timeout":
			c.Timeout = l.duration(f.val, "timeout")
		default:
			l.unknownField(f.key, "call_workflow", []string{"workflow", "inputs", "outputs", "timeout"}, "")
		}
	}
}

func (l *loader) callInputs(n *yaml.Node) map[string]*Template {
	fs, ok := l.mapping(n, "inputs")
	if !ok {
		return nil
	}
	m := make(map[string]*Template, len(fs))
	for _, f := range fs {
		v := f.val
		if v.Kind == yaml.ScalarNode && v.Tag != "!!str" && !isNull(v) {
			// numbers and booleans are passed as their text
			m[f.key.Value] = &Template{Source: v.Value, Pos: pos(v)}
			continue
		}
		m[f.key.Value] = l.template(v, "inputs."+f.key.Value)
	}
	return m
}

// callOutputs accepts a mapping {local: child_output} or a list of names
// (each mapped to itself).
func (l *loader) callOutputs(n *yaml.Node) map[string]string {
	m := map[string]string{}
	if n.Kind == yaml.SequenceNode {
		for _, name := range l.strList(n, "outputs") {
			m[name] = name
		}
		return m
	}
	fs, ok := l.mapping(n, "outputs")
	if !ok {
		return nil
	}
	for _, f := range fs {
		if s, ok := l.str(f.val, "outputs."+f.key.Value); ok {
			m[f.key.Value] = s
		}
	}
	return m
}

// CheckInputValue reports whether value is acceptable for in.
func CheckInputValue(in Input, value string) error {
	var num float64
	switch in.Type {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", value)
		}
		num = float64(n)
	case "boolean":
		if _, err := strconv.ParseBool(strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("%q is not a boolean", value)
		}
	}
	v := in.Validation
	if v == nil {
		return nil
	}
	if v.Pattern != "" {
		re, err := regexp.Compile(v.Pattern)
		if err != nil {
			return fmt.Errorf("pattern %q: %w", v.Pattern, err)
		}
		if !re.MatchString(value) {
			return fmt.Errorf("%q does not match pattern %q", value, v.Pattern)
		}
	}
	if len(v.Enum) > 0 && !contains(v.Enum, value) {
		return fmt.Errorf("%q is not one of %s", value, strings.Join(v.Enum, ", "))
	}
	if v.Min != nil || v.Max != nil {
		if in.Type != "integer" {
			num = float64(len([]rune(value)))
		}
		if v.Min != nil && num < *v.Min {
			return fmt.Errorf("%q is below the minimum %v", value, *v.Min)
		}
		if v.Max != nil && num > *v.Max {
			return fmt.Errorf("%q is above the maximum %v", value, *v.Max)
		}
	}
	if v.FileExists {
		if _, err := os.Stat(value); err != nil {
			return fmt.Errorf("file %q does not exist", value)
		}
	}
	return nil
}

// ErrNotFound reports that a workflow name resolved to no file.
var ErrNotFound = errors.New("workflow not found")

// conversation reads an agent state's follow-up prompts: a non-empty list
// of non-empty template strings. A mapping form (per-turn options) is
// refused on purpose: a turn continues the step's provider session, so
// there is nothing a turn could set that the step does not already.
func (l *loader) conversation(n *yaml.Node) []*Template {
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "conversation must be a list of follow-up prompts (strings), got %s", kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		l.errf(n, "conversation lists no follow-up prompts (remove it for a single-turn step)")
		return nil
	}
	out := make([]*Template, 0, len(n.Content))
	for i, c := range n.Content {
		c = deref(c)
		what := fmt.Sprintf("conversation[%d]", i)
		if c.Kind != yaml.ScalarNode || c.Tag != "!!str" {
			l.errf(c, "%s must be a prompt string, got %s", what, kindName(c))
			continue
		}
		if strings.TrimSpace(c.Value) == "" {
			l.errf(c, "%s is an empty prompt", what)
			continue
		}
		if t := l.template(c, what); t != nil {
			out = append(out, t)
		}
	}
	return out
}

// usesTurn reports whether t reads .turn (or $.turn), which only a
// conversation follow-up has; elsewhere it would silently render empty.
func usesTurn(t *Template) bool {
	found := false
	t.walk(func(n parse.Node) {
		switch n := n.(type) {
		case *parse.FieldNode:
			found = found || len(n.Ident) > 0 && n.Ident[0] == "turn"
		case *parse.VariableNode:
			found = found || len(n.Ident) > 1 && n.Ident[0] == "$" && n.Ident[1] == "turn"
		}
	})
	return found
}
