package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/workflow"
)

// PauseFunc is asked before every step of an interactive run, loop body
// steps and parallel branches included, with what the step is about to run.
// It decides whether the step runs, is skipped or ends the run.
type PauseFunc func(ctx context.Context, step StepInfo) Action

// Action is the answer to a pause.
type Action int

// The actions.
const (
	// Continue runs the step.
	Continue Action = iota
	// Skip records the step as skipped (a success with no output, result
	// {"skipped": true}) and goes on as after a success.
	Skip
	// Abort ends the run, cancelled, before the step.
	Abort
)

// StepInfo describes a step about to run.
type StepInfo struct {
	Path      string
	Iteration int
	Name      string
	Type      string
	// Resolved holds what the step is about to run, resolved against the
	// run's current values, in display order: its command, prompt,
	// operation or sub-workflow inputs, loop items, and so on.
	Resolved []Field
	// Next names where the flow goes after a success, when it says.
	Next string
}

// Field is one named value of StepInfo.Resolved.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func (r *run) pauseAt(ctx context.Context, sc scope, st *workflow.State) (outcome, bool) {
	info := StepInfo{Path: joinPath(sc.prefix, st.Name), Iteration: sc.iteration, Name: st.Name, Type: st.Type,
		Resolved: r.resolvedFields(sc, st), Next: st.OnSuccess}
	if st.OnComplete != "" {
		info.Next = st.OnComplete
	}
	for i := range info.Resolved {
		info.Resolved[i].Value = r.e.mask(info.Resolved[i].Value)
	}
	switch r.pause(ctx, info) {
	case Skip:
		sp := r.startSpan(sc, st.Name, stateKind(st), "", 0)
		o := outcome{ok: true}
		r.setState(st.Name, stateValue(o, "", ""))
		r.show(r.indent() + "↷ " + sp.label() + " skipped")
		sp.end("success", map[string]any{"skipped": true}, "")
		return o, true
	case Abort:
		msg := fmt.Sprintf("aborted before %s", info.Path)
		return outcome{cancelled: true, exitCode: exitCancelled, err: msg, end: &ending{status: "cancelled", exitCode: exitcode.Cancelled, message: msg}}, true
	}
	return outcome{}, false
}

// resolvedFields renders what a step would run with the run's values now.
// A value that cannot be rendered shows why.
func (r *run) resolvedFields(sc scope, st *workflow.State) []Field {
	data := r.data(sc)
	var out []Field
	add := func(name string, v string, err error) {
		if err != nil {
			v = "(cannot resolve: " + err.Error() + ")"
		}
		out = append(out, Field{name, v})
	}
	tmpl := func(name string, t *workflow.Template) {
		if t != nil {
			v, err := t.Execute(data)
			add(name, v, err)
		}
	}
	switch st.Type {
	case workflow.TypeStep:
		s, err := r.script(st, data)
		add("command", s.text, err)
		if st.Dir != nil {
			d, err := r.stepDir(st, data)
			add("dir", d, err)
		}
	case workflow.TypeAgent:
		req, err := r.agentRequest(st, data)
		add("provider", req.Provider, nil)
		add("prompt", req.Prompt, err)
		if req.SystemPrompt != "" {
			add("system_prompt", req.SystemPrompt, nil)
		}
	case workflow.TypeOperation:
		add("operation", st.Operation, nil)
		in, err := resolveValue(st.Inputs, data)
		add("inputs", fmt.Sprint(in), err)
	case workflow.TypeCallWorkflow:
		add("workflow", st.Call.Workflow, nil)
		for _, k := range slices.Sorted(maps.Keys(st.Call.Inputs)) {
			v, err := st.Call.Inputs[k].Execute(data)
			add("input "+k, v, err)
		}
	case workflow.TypeForEach:
		items, err := r.items(sc, st)
		add("items", fmt.Sprint(items), err)
		add("body", strings.Join(st.Body, ", "), nil)
	case workflow.TypeWhile:
		add("while", st.While.Source, nil)
		add("body", strings.Join(st.Body, ", "), nil)
	case workflow.TypeParallel:
		add("branches", strings.Join(st.Parallel, ", "), nil)
		add("strategy", st.Strategy, nil)
	case workflow.TypeTerminal:
		add("status", st.Status, nil)
		tmpl("message", st.Message)
	default:
		add("config", fmt.Sprint(st.Config), nil)
	}
	if sc.loop != nil {
		add("loop.Item", fmt.Sprint(workflow.LoopItem(sc.loop.item)), nil)
		add("loop.Index", fmt.Sprint(sc.loop.index), nil)
	}
	return out
}
