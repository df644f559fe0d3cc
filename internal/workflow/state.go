package workflow

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Fields accepted by each state type, besides the flow fields.
var typeFields = map[string][]string{
	TypeStep:         {"command", "script_file", "dir", "timeout", "retry", "continue_on_error", "capture", "operation"},
	TypeAgent:        append([]string{"provider", "prompt", "prompt_file", "system_prompt", "options", "output_format", "timeout", "retry", "conversation", "capture"}, agentFields...),
	TypeTerminal:     {"status", "message", "mcp_proxy"},
	TypeParallel:     {"parallel", "strategy", "max_concurrent"},
	TypeForEach:      {"items", "body", "max_iterations", "break_when", "on_complete"},
	TypeWhile:        {"while", "body", "max_iterations", "break_when", "on_complete"},
	TypeOperation:    {"operation", "inputs", "retry", "timeout", "capture"},
	TypeCallWorkflow: {"call_workflow", "workflow", "inputs", "outputs", "timeout"},
}

var flowFields = []string{"type", "description", "on_success", "on_failure", "transitions", "hooks", "pre_hook", "post_hook", "depends_on", "mcp_proxy"}

// ignoredStateFields are state keys AWF's loader does not read: a step's
// when and loop: are silently skipped by AWF (the step runs once,
// unconditionally). reel loads them too, with a warning that says so,
// rather than pretending to honour them or refusing a file AWF runs.
var ignoredStateFields = map[string]string{
	"when": "AWF ignores a state's when (the state always runs); branch with transitions instead",
	"loop": "AWF ignores a state's loop (the state runs once); use a for_each or while state",
}

// BuiltinTypes lists the state types with built-in meaning.
var BuiltinTypes = []string{TypeStep, TypeAgent, TypeTerminal, TypeParallel, TypeForEach, TypeWhile, TypeOperation, TypeCallWorkflow}

// customFields are the fields of a custom step type's state (AWF's
// documented fields of a plugin step type).
var customFields = []string{"config", "timeout", "retry"}

func allowedFields(typ string) []string {
	f, ok := typeFields[typ]
	if !ok {
		f = customFields
	}
	if typ == TypeTerminal {
		return append([]string{"type", "description"}, f...)
	}
	return append(append([]string{}, flowFields...), f...)
}

// typeOwners lists the built-in state types whose own field key is (not
// the flow fields every non-terminal state has).
func typeOwners(key string) []string {
	var owners []string
	for _, t := range BuiltinTypes {
		if contains(typeFields[t], key) && !contains(flowFields, key) {
			owners = append(owners, t)
		}
	}
	return owners
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

// state loads one state: its type first, then each field the type takes
// (stateFields), then what holds between fields.
func (l *loader) state(k, n *yaml.Node) *State {
	name := k.Value
	if !stateNameRE.MatchString(name) {
		l.errf(k, "state name %q must start with a letter or _ and hold only letters, digits, _ and - (it becomes part of dot paths)", name)
	}
	fs, ok := l.mapping(n, "state "+name)
	if !ok {
		return nil
	}
	if hasField(fs, "use_template") {
		return l.templateState(k, fs)
	}
	s := &State{Name: name, Pos: pos(k), MaxIterations: DefaultMaxIterations, Strategy: StrategyAllSucceed}
	s.Type = l.stateType(fs)
	if s.Type == "" {
		l.errf(k, "state %q is missing its type", name)
		return s
	}
	allowed := allowedFields(s.Type)
	what := fmt.Sprintf("%s state %q", s.Type, name)
	for _, f := range fs {
		if l.skipField(s, what, allowed, f) {
			continue
		}
		if read := stateFields[f.key.Value]; read != nil {
			read(l, s, f)
		}
	}
	l.finishState(k, s, fs)
	return s
}

// stateType reads a state's type. AWF reads built-in type names in any
// case, and "command" as "step".
func (l *loader) stateType(fs []field) string {
	typ := ""
	for _, f := range fs {
		if f.key.Value != "type" {
			continue
		}
		typ, _ = l.str(f.val, "type")
		if lower := strings.ToLower(typ); lower == "command" {
			typ = TypeStep
		} else if contains(BuiltinTypes, lower) {
			typ = lower
		}
		if typ != "" {
			l.checkType(f.val, typ)
		}
	}
	return typ
}

// skipField tells whether a state's field is not read: one AWF ignores
// (with a warning), an operation on a step, one the state's type does not
// take (a warning when another type takes it, else an error).
func (l *loader) skipField(s *State, what string, allowed []string, f field) bool {
	key, v := f.key.Value, f.val
	if why, ok := ignoredStateFields[key]; ok {
		l.warnf(f.key, "%s: %q is ignored: %s", what, key, why)
		return true
	}
	if key == "operation" && s.Type == TypeStep {
		// AWF reads operation on every state; on a step it means
		// nothing, and "shell" says what the step is anyway.
		if op, ok := l.str(v, "operation"); ok && op != "shell" {
			l.warnf(v, "%s: operation %q is ignored on a step (it runs its command in a shell)", what, op)
		}
		return true
	}
	if contains(allowed, key) {
		return false
	}
	if owners := typeOwners(key); len(owners) > 0 && s.Type != TypeTerminal {
		// AWF reads every state's fields into one structure and ignores
		// what the state's type does not use (a pack's step carries a
		// prompt_file): reel loads it too and says it does nothing.
		l.warnf(f.key, "%s: %q is ignored: it belongs to %s states (AWF ignores it too)", what, key, strings.Join(owners, ", "))
		return true
	}
	l.unknownField(f.key, what, allowed, ownerOf(key))
	return true
}

// finishState checks what holds between a state's fields once they are
// read: one form of call_workflow, the fields the type requires, the MCP
// proxy, .turn only in conversation follow-ups.
func (l *loader) finishState(k *yaml.Node, s *State, fs []field) {
	if s.Type == TypeCallWorkflow && hasField(fs, "call_workflow") && (hasField(fs, "workflow") || hasField(fs, "inputs") || hasField(fs, "outputs")) {
		l.errf(k, "state %q mixes the nested call_workflow form with flat workflow/inputs/outputs keys; use one form", s.Name)
	}
	if s.Type == TypeCallWorkflow && s.Call != nil && s.Timeout > 0 && s.Call.Timeout == 0 {
		s.Call.Timeout = s.Timeout
	}
	l.requireFields(k, s)
	l.finishMCPProxy(s)
	for _, t := range []struct {
		what string
		t    *Template
	}{{"prompt", s.Prompt}, {"system_prompt", s.SystemPrompt}} {
		if usesTurn(t.t) {
			l.errAt(t.t.Pos, "%s: .turn is set only in conversation follow-ups (it is the previous turn's reply)", t.what)
		}
	}
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
		l.checkOperation(k, s)
	case TypeAgent:
		l.finishAgent(k, s)
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
		l.checkOperation(k, s)
	case TypeCallWorkflow:
		if s.Call == nil || s.Call.Workflow == "" {
			l.errf(k, "call_workflow %q is missing workflow", s.Name)
		}
	}
	if (s.Type == TypeForEach || s.Type == TypeWhile) && s.OnComplete != "" && s.OnSuccess != "" && s.OnComplete != s.OnSuccess {
		l.errf(k, "%s %q sets both on_complete and on_success to different states", s.Type, s.Name)
	}
}
