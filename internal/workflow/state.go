package workflow

import (
	"fmt"
	"regexp"
	"strconv"
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
	for _, f := range fs {
		if f.key.Value == "type" {
			s.Type, _ = l.str(f.val, "type")
			// AWF reads built-in type names in any case, and "command"
			// as "step".
			if lower := strings.ToLower(s.Type); lower == "command" {
				s.Type = TypeStep
			} else if contains(BuiltinTypes, lower) {
				s.Type = lower
			}
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
		if why, ok := ignoredStateFields[key]; ok {
			l.warnf(f.key, "%s: %q is ignored: %s", what, key, why)
			continue
		}
		if key == "operation" && s.Type == TypeStep {
			// AWF reads operation on every state; on a step it means
			// nothing, and "shell" says what the step is anyway.
			if op, ok := l.str(v, "operation"); ok && op != "shell" {
				l.warnf(v, "%s: operation %q is ignored on a step (it runs its command in a shell)", what, op)
			}
			continue
		}
		if !contains(allowed, key) {
			if owners := typeOwners(key); len(owners) > 0 && s.Type != TypeTerminal {
				// AWF reads every state's fields into one structure and
				// ignores what the state's type does not use (a pack's
				// step carries a prompt_file): reel loads it too and says
				// it does nothing.
				l.warnf(f.key, "%s: %q is ignored: it belongs to %s states (AWF ignores it too)", what, key, strings.Join(owners, ", "))
				continue
			}
			l.unknownField(f.key, what, allowed, ownerOf(key))
			continue
		}
		switch key {
		case "type":
		case "description":
			s.Description, _ = l.str(v, "description")
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
			if m, ok := l.value(v, "options", true).(map[string]any); ok {
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
			s.Conversation = l.conversation(s, v)
		case "mode", "skills", "role", "model", "max_tokens":
			l.agentField(s, key, v)
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
			if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
				if strings.Contains(v.Value, "{{") {
					s.MaxIterationsExpr = l.template(v, "max_iterations")
					continue
				}
				if x, err := strconv.Atoi(strings.TrimSpace(v.Value)); err == nil {
					v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x), Line: v.Line, Column: v.Column}
				} else {
					l.errf(v, "max_iterations must be an integer or a template such as \"{{.inputs.limit}}\", got %q", v.Value)
					continue
				}
			}
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
		case "hooks":
			l.stepHooks(s, v)
		case "pre_hook", "post_hook":
			l.stepHookField(s, f.key, v)
		case "capture":
			s.Capture = l.capture(v)
		case "mcp_proxy":
			s.MCPProxy = l.mcpProxy(v)
		case "depends_on":
			s.DependsOn = l.strList(v, "depends_on")
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
	l.finishMCPProxy(s)
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
