package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// execCall runs a sub-workflow as a child run with its own transcript file.
func (r *run) execCall(ctx context.Context, sc scope, st *workflow.State) outcome {
	sp := r.startStep(ctx, sc, st, transcript.KindCallWorkflow, "", nil)
	failNow := func(format string, args ...any) outcome {
		o := fail(format, args...)
		r.setState(st.Name, stateValue(o, "", ""))
		sp.finish(ctx, o, nil)
		return o
	}
	// A cycle or nesting too deep is a fault of the workflows, not a
	// failure a state can handle: as in AWF it ends the run at the call,
	// past its on_failure, and the callers' runs with it.
	fatal := func(format string, args ...any) outcome {
		o := failNow(format, args...)
		e := failed(o.err)
		e.fatal = true
		o.end = &e
		return o
	}
	call := st.Call
	cat := r.e.Catalog()
	ref, err := cat.FindFrom(call.Workflow, r.wf)
	if err != nil {
		return failNow("call_workflow: %v", err)
	}
	file := ref.File
	abs, _ := filepath.Abs(file)
	if cycle := r.callCycle(abs); cycle != "" {
		return fatal("call_workflow cycle: %s", cycle)
	}
	if r.depth+1 > r.e.maxDepth() {
		return fatal("call_workflow: nesting deeper than %d levels", r.e.maxDepth())
	}
	child, err := cat.Load(ref, r.e.LoadOptions())
	if err != nil {
		return failNow("call_workflow %s: %v", file, err)
	}
	data := r.data(sc)
	given, err := callInputs(call.Inputs, data)
	if err != nil {
		return failNow("%v", err)
	}
	if err := r.e.checkEnv(child); err != nil {
		return failNow("call_workflow %s: %v", child.Name, err)
	}
	inputs, err := resolveInputs(child, given, nil)
	if err != nil {
		return failNow("call_workflow %s: %v", child.Name, err)
	}
	ignored := child.Undeclared(given)
	if len(ignored) > 0 {
		r.display(fmt.Sprintf("%s! %s: workflow %s declares no input %s: ignored", r.indent(), sp.path, child.Name, strings.Join(ignored, ", ")))
	}
	childID, runChild, err := r.childRun(ctx, sp, child, inputs, append(append([]string{}, r.stack...), abs))
	if err != nil {
		return failNow("call_workflow: %v", err)
	}
	// Step events carry the step's (state's) name; the workflow it calls
	// goes in the result.
	r.emit(transcript.ExchangeEvent{Type: transcript.CallWorkflowStarted, Path: sp.path, Iteration: sp.iter, ChildRunID: childID,
		Payload: &transcript.StepPayload{Name: st.Name, Kind: transcript.KindCallWorkflow, Result: callResult{Workflow: child.Name}}})

	cctx := ctx
	if call.Timeout > 0 {
		var cancel context.CancelCauseFunc
		cctx, cancel = context.WithCancelCause(ctx)
		t := time.AfterFunc(call.Timeout, func() { cancel(fmt.Errorf("call_workflow timed out after %s", call.Timeout)) })
		defer t.Stop()
		defer cancel(nil)
	}
	rep := runChild(cctx)
	r.addUsage(rep.Usage, rep.CostUSD)

	o := callOutcome(ctx, child.Name, rep)
	outs, unmapped := callOutputs(call.Outputs, child, rep.Outputs)
	runResult := transcript.RunResult{Status: rep.Status, ExitCode: rep.ExitCode, DurationMS: rep.Duration.Milliseconds(), Usage: rep.Usage, CostUSD: rep.CostUSD}
	r.emit(transcript.ExchangeEvent{Type: transcript.CallWorkflowCompleted, Path: sp.path, Iteration: sp.iter, ChildRunID: childID,
		Payload: &transcript.StepPayload{Name: st.Name, Kind: transcript.KindCallWorkflow, Error: rep.Error,
			Result: callResult{Workflow: child.Name, RunResult: &runResult}}})

	v := callValue(o, outs)
	v["TokensUsed"] = rep.Usage.TotalTokens
	r.setState(st.Name, v)
	result := map[string]any{"child_run_id": childID, "workflow": child.Name, "status": rep.Status, "exit_code": rep.ExitCode, "outputs": outs}
	if len(ignored) > 0 {
		// AWF passes them without a word; the record says they were dropped
		result["ignored_inputs"] = ignored
	}
	if len(unmapped) > 0 {
		// a pair that names no output of the child maps nothing; say so
		result["unmapped_outputs"] = unmapped
	}
	sp.finish(ctx, o, result)
	if rep.RecordError != nil {
		r.recordFailed(fmt.Errorf("child run %s: %w", childID, rep.RecordError))
	}
	return o
}

// callInputs renders the inputs a call gives its child, in name order.
func callInputs(in map[string]*workflow.Template, data map[string]any) (map[string]string, error) {
	given := make(map[string]string, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		v, err := in[k].Execute(data)
		if err != nil {
			return nil, fmt.Errorf("call_workflow input %q: %v", k, err)
		}
		given[k] = v
	}
	return given, nil
}

// callCycle is the chain of workflow files, by name, when calling abs
// would call a workflow already running in this chain of calls.
func (r *run) callCycle(abs string) string {
	if !slices.Contains(r.stack, abs) {
		return ""
	}
	chain := append(append([]string{}, r.stack...), abs)
	for i := range chain {
		chain[i] = filepath.Base(chain[i])
	}
	return strings.Join(chain, " → ")
}

// callOutcome is a call_workflow step's outcome from its child run's
// report; a child that ended fatally (a cycle, too deep) ends this run too.
func callOutcome(ctx context.Context, child string, rep *Report) outcome {
	switch {
	case rep.Status == "success":
		return outcome{ok: true}
	case ctx.Err() != nil:
		return cancelledOutcome(ctx)
	}
	o := outcome{exitCode: rep.ExitCode, err: fmt.Sprintf("workflow %s %s: %s", child, rep.Status, rep.Error)}
	if o.exitCode == 0 {
		o.exitCode = 1
	}
	if rep.fatal {
		e := failed(o.err)
		e.fatal = true
		o.end = &e
	}
	return o
}

// callValue is the template view of a call_workflow step's result: the
// child's mapped outputs as .Data and .JSON, and as JSON text in .Output
// (empty when nothing was mapped).
func callValue(o outcome, outs map[string]any) map[string]any {
	var output string
	if len(outs) > 0 {
		js, _ := json.Marshal(outs)
		output = string(js)
	}
	v := stateValue(o, output, "")
	v["Data"] = outs
	v["JSON"] = outs
	return v
}

// callResult is the result of step.call_workflow.started (the workflow
// called) and .completed (also the child run's RunResult, inline).
type callResult struct {
	Workflow string `json:"workflow"`
	*transcript.RunResult
}

// callOutputs maps a finished child's outputs to the names the caller sees
// them under. Each pair of the call's outputs names a declared output of
// the child and a name for the caller, in either order: AWF documents
// "child output: parent name" and shows "parent name: child output" in its
// own example, and reel has read the second form. When both names are
// outputs of the child, the first is the child's. Without a mapping every
// output keeps its name. unmapped lists the pairs that name no output of
// the child (as "a: b").
func callOutputs(mapping map[string]string, child *workflow.Workflow, got map[string]any) (outs map[string]any, unmapped []string) {
	outs = map[string]any{}
	if len(mapping) == 0 {
		maps.Copy(outs, got)
		return outs, nil
	}
	declared := map[string]bool{}
	for _, o := range child.Outputs {
		declared[o.Name] = true
	}
	for _, k := range slices.Sorted(maps.Keys(mapping)) {
		v := mapping[k]
		switch {
		case declared[k]:
			outs[v] = got[k]
		case declared[v]:
			outs[k] = got[v]
		default:
			unmapped = append(unmapped, k+": "+v)
		}
	}
	return outs, unmapped
}
