package workflow

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// stateFields read each field of a state into it, by key. The loader calls
// one only for a field the state's type takes (allowedFields); "type" is
// read first, by stateType.
var stateFields = map[string]func(l *loader, s *State, f field){
	"description":       func(l *loader, s *State, f field) { s.Description, _ = l.str(f.val, "description") },
	"command":           func(l *loader, s *State, f field) { s.Command = orPlaceholder(l.template(f.val, "command")) },
	"script_file":       func(l *loader, s *State, f field) { s.ScriptFile, _ = l.str(f.val, "script_file") },
	"dir":               func(l *loader, s *State, f field) { s.Dir = l.template(f.val, "dir") },
	"timeout":           func(l *loader, s *State, f field) { s.Timeout = l.duration(f.val, "timeout") },
	"retry":             func(l *loader, s *State, f field) { s.Retry = l.retry(f.val) },
	"continue_on_error": func(l *loader, s *State, f field) { s.ContinueOnError, _ = l.boolv(f.val, "continue_on_error") },
	"provider":          func(l *loader, s *State, f field) { s.Provider, _ = l.str(f.val, "provider") },
	"prompt":            func(l *loader, s *State, f field) { s.Prompt = orPlaceholder(l.template(f.val, "prompt")) },
	"prompt_file":       func(l *loader, s *State, f field) { s.PromptFile, _ = l.str(f.val, "prompt_file") },
	"system_prompt":     func(l *loader, s *State, f field) { s.SystemPrompt = l.template(f.val, "system_prompt") },
	"options":           func(l *loader, s *State, f field) { s.Options = l.mappingValue(f.val, "options", true) },
	"output_format":     (*loader).outputFormat,
	"conversation":      func(l *loader, s *State, f field) { s.Conversation = l.conversation(s, f.val) },
	"mode":              agentStateField,
	"skills":            agentStateField,
	"role":              agentStateField,
	"model":             agentStateField,
	"max_tokens":        agentStateField,
	"status":            (*loader).terminalStatus,
	"message":           func(l *loader, s *State, f field) { s.Message = l.template(f.val, "message") },
	"parallel":          (*loader).parallelBranches,
	"strategy":          (*loader).strategy,
	"max_concurrent":    (*loader).maxConcurrent,
	"items":             (*loader).items,
	"body":              (*loader).body,
	"max_iterations":    (*loader).maxIterations,
	"break_when":        func(l *loader, s *State, f field) { s.BreakWhen = l.expr(f.val, "break_when", true) },
	"on_complete":       func(l *loader, s *State, f field) { s.OnComplete, _ = l.str(f.val, "on_complete") },
	"while":             func(l *loader, s *State, f field) { s.While = l.expr(f.val, "while", true) },
	"operation":         func(l *loader, s *State, f field) { s.Operation, _ = l.str(f.val, "operation") },
	"inputs":            (*loader).stateInputs,
	"call_workflow":     func(l *loader, s *State, f field) { l.callWorkflow(s, f.val) },
	"workflow":          func(l *loader, s *State, f field) { s.call().Workflow, _ = l.str(f.val, "workflow") },
	"outputs":           func(l *loader, s *State, f field) { s.call().Outputs = l.callOutputs(f.val) },
	"config":            func(l *loader, s *State, f field) { s.Config = l.mappingValue(f.val, "config", false) },
	"hooks":             func(l *loader, s *State, f field) { l.stepHooks(s, f.val) },
	"pre_hook":          func(l *loader, s *State, f field) { l.stepHookField(s, f.key, f.val) },
	"post_hook":         func(l *loader, s *State, f field) { l.stepHookField(s, f.key, f.val) },
	"capture":           func(l *loader, s *State, f field) { s.Capture = l.capture(f.val) },
	"mcp_proxy":         func(l *loader, s *State, f field) { s.MCPProxy = l.mcpProxy(f.val) },
	"depends_on":        func(l *loader, s *State, f field) { s.DependsOn = l.strList(f.val, "depends_on") },
	"on_success":        func(l *loader, s *State, f field) { s.OnSuccess, _ = l.str(f.val, "on_success") },
	"on_failure":        func(l *loader, s *State, f field) { s.OnFailure = l.onFailure(f.val) },
	"transitions":       func(l *loader, s *State, f field) { s.Transitions = l.transitions(f.val) },
}

func agentStateField(l *loader, s *State, f field) { l.agentField(s, f.key.Value, f.val) }

// mappingValue reads a free-form mapping (options, config); null is none.
func (l *loader) mappingValue(v *yaml.Node, what string, templates bool) map[string]any {
	m, ok := l.value(v, what, templates).(map[string]any)
	if !ok && !isNull(v) {
		l.errf(v, "%s must be a mapping, got %s", what, kindName(v))
	}
	return m
}

func (l *loader) outputFormat(s *State, f field) {
	if of, ok := l.str(f.val, "output_format"); ok {
		if of != "json" && of != "text" {
			l.errf(f.val, "output_format must be json or text, got %q", of)
		}
		s.OutputFormat = of
	}
}

func (l *loader) terminalStatus(s *State, f field) {
	if st, ok := l.str(f.val, "status"); ok {
		if st != "success" && st != "failure" {
			l.errf(f.val, "status must be success or failure, got %q", st)
		}
		s.Status = st
	}
}

func (l *loader) parallelBranches(s *State, f field) {
	s.Parallel = append([]string{}, l.strList(f.val, "parallel")...)
	if f.val.Kind == yaml.SequenceNode && len(s.Parallel) == 0 {
		l.errf(f.val, "parallel lists no branches")
	}
}

func (l *loader) strategy(s *State, f field) {
	if st, ok := l.str(f.val, "strategy"); ok {
		l.oneOf(f.val, "strategy", st, []string{StrategyAllSucceed, StrategyAnySucceed, StrategyBestEffort})
		s.Strategy = st
	}
}

func (l *loader) maxConcurrent(s *State, f field) {
	if x, ok := l.intv(f.val, "max_concurrent"); ok {
		if x < 0 {
			l.errf(f.val, "max_concurrent must not be negative")
		}
		s.MaxConcurrent = x
	}
}

// items reads a for_each's items: a literal list, or a template.
func (l *loader) items(s *State, f field) {
	v := f.val
	if v.Kind != yaml.SequenceNode {
		s.Items = orPlaceholder(l.template(v, "items"))
		return
	}
	items, _ := l.value(v, "items", false).([]any)
	s.ItemsLiteral = items
	if s.ItemsLiteral == nil {
		s.ItemsLiteral = []any{}
	}
}

func (l *loader) body(s *State, f field) {
	s.Body = append([]string{}, l.strList(f.val, "body")...)
	if f.val.Kind == yaml.SequenceNode && len(s.Body) == 0 {
		l.errf(f.val, "body lists no states")
	}
}

// maxIterations reads a loop's bound: an integer (a quoted one too) or a
// template resolved when the loop starts.
func (l *loader) maxIterations(s *State, f field) {
	v := f.val
	if v.Kind == yaml.ScalarNode && v.Tag == "!!str" {
		if strings.Contains(v.Value, "{{") {
			s.MaxIterationsExpr = l.template(v, "max_iterations")
			return
		}
		x, err := strconv.Atoi(strings.TrimSpace(v.Value))
		if err != nil {
			l.errf(v, "max_iterations must be an integer or a template such as \"{{.inputs.limit}}\", got %q", v.Value)
			return
		}
		v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x), Line: v.Line, Column: v.Column}
	}
	if x, ok := l.intv(v, "max_iterations"); ok {
		if x < 1 || x > MaxMaxIterations {
			l.errf(v, "max_iterations must be between 1 and %d, got %d", MaxMaxIterations, x)
		}
		s.MaxIterations = x
	}
}

// stateInputs reads inputs: a sub-workflow's (the flat call form), or an
// operation's mapping.
func (l *loader) stateInputs(s *State, f field) {
	if s.Type == TypeCallWorkflow {
		s.call().Inputs = l.callInputs(f.val)
		return
	}
	s.Inputs = l.mappingValue(f.val, "inputs", true)
}
