package workflow

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// HookAction is one entry of a hook list: a shell command, or a line
// logged to the display. Exactly one of Command and Log is set.
type HookAction struct {
	Command *Template
	Log     *Template
	// Timeout bounds the command (0: the hooked step's timeout, if any).
	Timeout time.Duration
	Pos     Pos
}

// StepHooks are a state's hooks. Pre runs once before the state's work
// (before its first attempt), Post once after it (after its last attempt,
// also when it failed, not when the run was cancelled). A failing hook
// command is recorded and the state goes on, as in AWF.
type StepHooks struct {
	Pre  []HookAction
	Post []HookAction
}

// WorkflowHooks are the run's hooks. Start runs before the initial state
// and a failing Start command ends the run; End runs after a successful
// run, Error after a failed one (its templates see .error), Cancel after a
// cancelled one.
type WorkflowHooks struct {
	Start  []HookAction
	End    []HookAction
	Error  []HookAction
	Cancel []HookAction
}

// Hook names as written in workflow files. They are also the paths the
// hooks are recorded at: <state path>.pre_hook, <state path>.post_hook and
// the workflow hook's own name at top level.
const (
	HookPre            = "pre_hook"
	HookPost           = "post_hook"
	HookWorkflowStart  = "workflow_start"
	HookWorkflowEnd    = "workflow_end"
	HookWorkflowError  = "workflow_error"
	HookWorkflowCancel = "workflow_cancel"
)

var workflowHookFields = []string{HookWorkflowStart, HookWorkflowEnd, HookWorkflowError, HookWorkflowCancel}

// Named returns the workflow hook lists by hook name, in run order, skipping
// empty ones.
func (h *WorkflowHooks) Named() map[string][]HookAction {
	if h == nil {
		return nil
	}
	m := map[string][]HookAction{}
	for name, list := range map[string][]HookAction{HookWorkflowStart: h.Start, HookWorkflowEnd: h.End, HookWorkflowError: h.Error, HookWorkflowCancel: h.Cancel} {
		if len(list) > 0 {
			m[name] = list
		}
	}
	return m
}

func (l *loader) workflowHooks(n *yaml.Node) *WorkflowHooks {
	fs, ok := l.mapping(n, "hooks")
	if !ok {
		return nil
	}
	h := &WorkflowHooks{}
	for _, f := range fs {
		what := "hooks." + f.key.Value
		switch f.key.Value {
		case HookWorkflowStart:
			h.Start = l.hookList(f.val, what)
		case HookWorkflowEnd:
			h.End = l.hookList(f.val, what)
		case HookWorkflowError:
			h.Error = l.hookList(f.val, what)
		case HookWorkflowCancel:
			h.Cancel = l.hookList(f.val, what)
		default:
			l.unknownField(f.key, "the workflow's hooks", workflowHookFields, "")
		}
	}
	return h
}

// stepHooks parses a state's hooks: {pre: [...], post: [...]}.
func (l *loader) stepHooks(s *State, n *yaml.Node) {
	fs, ok := l.mapping(n, "hooks")
	if !ok {
		return
	}
	for _, f := range fs {
		switch f.key.Value {
		case "pre":
			l.setStepHook(s, f.key, HookPre, l.hookList(f.val, "hooks.pre"))
		case "post":
			l.setStepHook(s, f.key, HookPost, l.hookList(f.val, "hooks.post"))
		default:
			l.unknownField(f.key, fmt.Sprintf("hooks of state %q", s.Name), []string{"pre", "post"}, "")
		}
	}
}

// stepHookField parses the pre_hook / post_hook form: one action, or a
// list of them.
func (l *loader) stepHookField(s *State, k, n *yaml.Node) {
	var list []HookAction
	if n.Kind == yaml.MappingNode {
		if a, ok := l.hookAction(n, k.Value); ok {
			list = []HookAction{a}
		}
	} else {
		list = l.hookList(n, k.Value)
	}
	l.setStepHook(s, k, k.Value, list)
}

func (l *loader) setStepHook(s *State, k *yaml.Node, which string, list []HookAction) {
	if s.Hooks == nil {
		s.Hooks = &StepHooks{}
	}
	dst := &s.Hooks.Pre
	if which == HookPost {
		dst = &s.Hooks.Post
	}
	if *dst != nil {
		l.errf(k, "state %q sets its %s twice (hooks.%s and %s are the same hook; use one form)", s.Name, which, which[:len(which)-len("_hook")], which)
		return
	}
	if list == nil {
		list = []HookAction{}
	}
	*dst = list
}

func (l *loader) hookList(n *yaml.Node, what string) []HookAction {
	var out []HookAction
	l.list(n, what, what+" entry", func(c *yaml.Node, _ []field) {
		if a, ok := l.hookAction(c, what); ok {
			out = append(out, a)
		}
	})
	return out
}

var hookActionFields = []string{"command", "log", "timeout"}

func (l *loader) hookAction(n *yaml.Node, what string) (HookAction, bool) {
	fs, ok := l.mapping(n, what+" entry")
	if !ok {
		return HookAction{}, false
	}
	a := HookAction{Pos: pos(n)}
	var haveCommand, haveLog bool
	for _, f := range fs {
		switch f.key.Value {
		case "command":
			haveCommand = true
			a.Command = orPlaceholder(l.template(f.val, what+" command"))
		case "log":
			haveLog = true
			a.Log = orPlaceholder(l.template(f.val, what+" log"))
		case "timeout":
			a.Timeout = l.duration(f.val, what+" timeout")
		default:
			l.unknownField(f.key, "a hook action", hookActionFields, "")
		}
	}
	if haveCommand == haveLog {
		l.errf(n, "%s entry needs exactly one of command or log", what)
		return a, false
	}
	if haveLog && a.Timeout > 0 {
		l.errf(n, "%s entry: timeout applies to a command, not a log line", what)
	}
	return a, true
}

func (a HookAction) template() *Template {
	if a.Command != nil {
		return a.Command
	}
	return a.Log
}

// checkHooks checks what needs the whole file: the workflow hooks' state
// references, and that no state name makes a hook's recorded path
// ambiguous.
func (l *loader) checkHooks(wf *Workflow) {
	for name, list := range wf.Hooks.Named() {
		for _, a := range list {
			// AWF's validate checks hook templates; only workflow_error's
			// see .error
			l.checkTemplate(wf, a.template(), Site{What: "hooks." + name, AnyOrder: true, ErrorHook: name == HookWorkflowError})
		}
		if s, ok := wf.States[name]; ok {
			l.errAt(s.Pos, "state name %q is the path the workflow's %s hook is recorded at; rename the state", name, name)
		}
	}
	for _, name := range wf.Order {
		s := wf.States[name]
		if s.Hooks == nil {
			continue
		}
		for _, child := range append(append([]string{}, s.Parallel...), s.Body...) {
			if child == HookPre || child == HookPost {
				if c, ok := wf.States[child]; ok {
					l.errAt(c.Pos, "state %q runs inside %q, whose hooks are recorded at %s.%s; rename the state", child, name, name, child)
				}
			}
		}
	}
}
