package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/reelhq/reel/internal/workflow"
)

// Plan is what a dry run shows: the states in the order the flow reaches
// them from the initial state, each with what it would run, resolved
// against the inputs; loop bodies and parallel branches nested under their
// block. Nothing runs and nothing is written.
type Plan struct {
	Workflow    string         `json:"workflow"`
	Description string         `json:"description,omitempty"`
	File        string         `json:"file"`
	Inputs      map[string]any `json:"inputs"`
	// Hooks are the workflow's hooks (workflow_start, workflow_end,
	// workflow_error, workflow_cancel), resolved like the steps' commands.
	Hooks []Field     `json:"hooks,omitempty"`
	Steps []*PlanStep `json:"steps"`
}

// PlanStep is one state of a plan.
type PlanStep struct {
	Path string `json:"path"`
	Name string `json:"name"`
	Type string `json:"type"`
	// Fields hold what the state would run. A template that reads the
	// result of another state is resolved with placeholders such as
	// ⟨states.build.Output⟩; one that digs into a result's JSON is shown
	// as written.
	Fields   []Field     `json:"fields,omitempty"`
	Next     []PlanEdge  `json:"next,omitempty"`
	Children []*PlanStep `json:"children,omitempty"`
}

// PlanEdge is one way the flow leaves a state.
type PlanEdge struct {
	// On is "success", "failure", "complete" (a loop), "always" or "when
	// EXPR" (a transition); Message and Status describe an inline
	// on_failure that ends the run.
	On string `json:"on"`
	To string `json:"to,omitempty"`
}

// Plan resolves the inputs (as Run would) and returns the dry run's plan.
// It stops with ctx's error when ctx ends.
func (e *Engine) Plan(ctx context.Context, wf *workflow.Workflow, given map[string]string) (*Plan, error) {
	inputs, err := resolveInputs(wf, given, nil)
	if err != nil {
		return nil, err
	}
	p := &Plan{Workflow: wf.Name, Description: wf.Description, File: wf.File, Inputs: inputs}
	r := &run{e: e, wf: wf, id: "⟨run id⟩", inputs: inputs, states: make(map[string]map[string]any, len(wf.States)), env: envMap(e.environ())}
	r.context, r.awf = e.contextNamespaces(r.env, wf)
	// Every state's result is a placeholder; they hold no JSON, so
	// templates and expressions share one map each (setState would clone
	// it for templates).
	r.tstates = make(map[string]map[string]any, len(wf.States))
	for name := range wf.States {
		ph := make(map[string]any, len(workflow.StateProps))
		for _, f := range workflow.StateProps {
			ph[f] = placeholder("states." + name + "." + f)
		}
		r.states[name], r.tstates[name] = ph, ph
	}
	if h := wf.Hooks; h != nil {
		for _, x := range []struct {
			name    string
			actions []workflow.HookAction
		}{{workflow.HookWorkflowStart, h.Start}, {workflow.HookWorkflowEnd, h.End}, {workflow.HookWorkflowError, h.Error}, {workflow.HookWorkflowCancel, h.Cancel}} {
			if len(x.actions) > 0 {
				p.Hooks = append(p.Hooks, Field{x.name, e.mask(planHooks(x.actions, r.data(scope{})))})
			}
		}
	}
	// Depth first from the initial state, each state before the ones it
	// leads to, in the order of its ways out; a stack rather than
	// recursion, for workflows of many thousands of states.
	seen := map[string]bool{}
	stack := []string{wf.Initial}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		st := wf.States[name]
		if st == nil || seen[name] {
			continue
		}
		seen[name] = true
		p.Steps = append(p.Steps, r.planStep(st, "", seen))
		next := st.Successors()
		for i := len(next) - 1; i >= 0; i-- {
			if !isChildOf(st, next[i]) {
				stack = append(stack, next[i])
			}
		}
	}
	return p, nil
}

func placeholder(ref string) string { return "⟨" + ref + "⟩" }

func isChildOf(st *workflow.State, name string) bool {
	return slices.Contains(st.Body, name) || slices.Contains(st.Parallel, name)
}

func (r *run) planStep(st *workflow.State, prefix string, seen map[string]bool) *PlanStep {
	ps := &PlanStep{Path: joinPath(prefix, st.Name), Name: st.Name, Type: st.Type}
	sc := scope{prefix: prefix}
	if st.Type == workflow.TypeForEach || st.Type == workflow.TypeWhile || r.loopDepthOf(ps.Path) > 0 {
		vars := map[string]any{}
		for _, f := range workflow.LoopProps {
			vars[f] = placeholder("loop." + f)
		}
		sc.loop = &loopState{vars: vars}
	}
	for _, f := range r.resolvedFields(sc, st) {
		if strings.HasPrefix(f.Name, "loop.") {
			continue
		}
		ps.Fields = append(ps.Fields, Field{f.Name, r.e.mask(planValue(st, f))})
	}
	if st.Type == workflow.TypeForEach && st.ItemsLiteral == nil && st.Items != nil {
		ps.Fields = setField(ps.Fields, "items", planTemplate(st.Items, r.data(sc)))
	}
	if h := st.Hooks; h != nil {
		if len(h.Pre) > 0 {
			ps.Fields = append(ps.Fields, Field{workflow.HookPre, r.e.mask(planHooks(h.Pre, r.data(sc)))})
		}
		if len(h.Post) > 0 {
			ps.Fields = append(ps.Fields, Field{workflow.HookPost, r.e.mask(planHooks(h.Post, r.data(sc)))})
		}
	}
	if st.Timeout > 0 {
		ps.Fields = append(ps.Fields, Field{"timeout", st.Timeout.String()})
	}
	if st.Retry != nil && st.Retry.MaxAttempts > 1 {
		ps.Fields = append(ps.Fields, Field{"retry", fmt.Sprintf("up to %d attempts, %s backoff", st.Retry.MaxAttempts, orDefault(st.Retry.Backoff, "constant"))})
	}
	if st.Type == workflow.TypeForEach || st.Type == workflow.TypeWhile {
		ps.Fields = append(ps.Fields, Field{"max_iterations", fmt.Sprint(st.MaxIterations)})
		if st.BreakWhen != nil {
			ps.Fields = append(ps.Fields, Field{"break_when", st.BreakWhen.Source})
		}
	}
	for _, t := range st.Transitions {
		on := "always"
		if t.When != nil {
			on = "when " + t.When.Source
		}
		ps.Next = append(ps.Next, PlanEdge{On: on, To: t.Goto})
	}
	if st.OnSuccess != "" {
		ps.Next = append(ps.Next, PlanEdge{On: "success", To: st.OnSuccess})
	}
	if st.OnComplete != "" {
		ps.Next = append(ps.Next, PlanEdge{On: "complete", To: st.OnComplete})
	}
	if f := st.OnFailure; f != nil {
		if f.Inline {
			msg := ""
			if f.Message != nil {
				msg = f.Message.Source
			}
			ps.Next = append(ps.Next, PlanEdge{On: "failure", To: fmt.Sprintf("end the run with status %d: %s", f.Status, msg)})
		} else {
			ps.Next = append(ps.Next, PlanEdge{On: "failure", To: f.State})
		}
	}
	for _, c := range append(append([]string{}, st.Body...), st.Parallel...) {
		if cs := r.wf.States[c]; cs != nil {
			seen[c] = true
			ps.Children = append(ps.Children, r.planStep(cs, ps.Path, seen))
		}
	}
	return ps
}

// planValue shows a template that digs into another state's parsed result
// as written: placeholders cannot stand in for JSON.
func planValue(st *workflow.State, f Field) string {
	var t *workflow.Template
	switch f.Name {
	case "command":
		t = st.Command
	case "prompt":
		t = st.Prompt
	case "system_prompt":
		t = st.SystemPrompt
	case "message":
		t = st.Message
	}
	if t != nil && readsJSON(t.Source) {
		return t.Source
	}
	return f.Value
}

// planHooks shows a hook list one action a line: a command resolved like
// a step's, a log action as log "TEXT".
func planHooks(actions []workflow.HookAction, data map[string]any) string {
	lines := make([]string, 0, len(actions))
	for _, a := range actions {
		switch {
		case a.Command != nil:
			lines = append(lines, planTemplate(a.Command, data))
		case a.Log != nil:
			lines = append(lines, fmt.Sprintf("log %q", planTemplate(a.Log, data)))
		}
	}
	return strings.Join(lines, "\n")
}

func planTemplate(t *workflow.Template, data map[string]any) string {
	if readsJSON(t.Source) {
		return t.Source
	}
	v, err := t.Execute(data)
	if err != nil {
		return t.Source
	}
	return v
}

func readsJSON(src string) bool {
	return strings.Contains(src, ".JSON") || strings.Contains(src, ".Data") || strings.Contains(src, ".Response") || strings.Contains(src, ".turn")
}

func setField(fs []Field, name, value string) []Field {
	for i := range fs {
		if fs[i].Name == name {
			fs[i].Value = value
			return fs
		}
	}
	return append(fs, Field{name, value})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
