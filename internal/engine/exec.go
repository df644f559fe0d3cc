package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// scope is where a state runs: the path prefix of its parent (parallel
// block or loop), the innermost loop index, the loop variables, and the
// state being run (.workflow.CurrentState).
type scope struct {
	prefix    string
	iteration int
	loop      *loopState
	state     string
	// hooked is the state intercept already ran for (see lifecycle.go), and
	// silent makes its span write nothing: a resumed run passing through
	// a block an earlier attempt completed.
	hooked *workflow.State
	silent bool
}

// outcome is how a state execution ended.
type outcome struct {
	ok        bool
	exitCode  int
	err       string
	cancelled bool
	// final forbids another retry attempt.
	final bool
	// end is set when the state ends the whole run (terminal state or an
	// inline on_failure reached inside a nested construct).
	end *ending
	// next is where a loop's body sent the run (a state outside the
	// body); it takes the place of the loop's own next state.
	next string
}

// ending is how a run ends.
type ending struct {
	status   string // success | failure | cancelled
	exitCode int
	message  string
	// fatal marks an end no caller may handle (a call_workflow cycle):
	// the calling run ends too.
	fatal bool
}

func fail(format string, args ...any) outcome {
	return outcome{exitCode: 1, err: fmt.Sprintf(format, args...)}
}

func cancelledOutcome(ctx context.Context) outcome {
	return outcome{exitCode: exitCancelled, err: cancelReason(ctx), cancelled: true}
}

// outcomeOf is the outcome of a step whose work returned err: cancelled
// when the run's context ended, else failed with err, else ok.
func outcomeOf(ctx context.Context, err error) outcome {
	switch {
	case ctx.Err() != nil:
		return cancelledOutcome(ctx)
	case err != nil:
		return fail("%v", err)
	}
	return outcome{ok: true}
}

// failed ends a run in failure with AWF's execution-error status.
func failed(msg string) ending {
	return ending{status: "failure", exitCode: exitcode.Execution, message: msg}
}

func cancelledEnding(ctx context.Context) ending {
	return ending{status: "cancelled", exitCode: exitcode.Cancelled, message: cancelReason(ctx)}
}

func cancelReason(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		return "cancelled: " + c.Error()
	}
	return "cancelled"
}

func status(o outcome) string {
	switch {
	case o.cancelled:
		return "cancelled"
	case o.ok:
		return "success"
	}
	return "failure"
}

// machine follows the states from the initial one.
func (r *run) machine(ctx context.Context) ending {
	cur := r.wf.Initial
	for visits := 0; ; visits++ {
		if visits >= maxStateVisits {
			return failed(fmt.Sprintf("run stopped after %d state executions: the transitions loop without reaching an end", maxStateVisits))
		}
		if ctx.Err() != nil {
			return cancelledEnding(ctx)
		}
		st := r.wf.States[cur]
		out := r.exec(ctx, scope{}, st)
		if out.end != nil {
			return *out.end
		}
		if out.cancelled || ctx.Err() != nil {
			return cancelledEnding(ctx)
		}
		next, end, err := r.next(st, out, scope{})
		if err != nil {
			return failed(err.Error())
		}
		if end != nil {
			return *end
		}
		cur = next
	}
}

// next picks the state after st: transitions in order, then on_success /
// on_failure. A nil end and empty next cannot both happen.
func (r *run) next(st *workflow.State, out outcome, sc scope) (string, *ending, error) {
	if out.next != "" {
		return out.next, nil, nil
	}
	if len(st.Transitions) > 0 {
		env := r.exprEnv(sc)
		for _, t := range st.Transitions {
			if t.When == nil {
				return t.Goto, nil, nil
			}
			ok, err := t.When.True(env)
			if err != nil {
				return "", nil, fmt.Errorf("state %q transition: %w", st.Name, err)
			}
			if ok {
				return t.Goto, nil, nil
			}
		}
	}
	if out.ok || st.ContinueOnError {
		next := st.OnSuccess
		if st.OnComplete != "" {
			next = st.OnComplete
		}
		if next == "" {
			return "", &ending{status: "success", exitCode: exitcode.OK}, nil
		}
		return next, nil, nil
	}
	if f := st.OnFailure; f != nil {
		if !f.Inline {
			return f.State, nil, nil
		}
		msg, err := f.Message.Execute(r.data(sc))
		if err != nil {
			msg = err.Error()
		}
		if msg == "" {
			msg = fmt.Sprintf("state %q failed: %s", st.Name, out.err)
		}
		r.display(r.indent() + "■ " + msg)
		code := exitcode.Execution
		if f.Status != 0 {
			code = f.Status
		}
		return "", &ending{status: "failure", exitCode: code, message: msg}, nil
	}
	msg := fmt.Sprintf("state %q failed", st.Name)
	if out.err != "" {
		msg += ": " + out.err
	}
	e := failed(msg)
	return "", &e, nil
}

// exec runs one state (every attempt) and records it.
func (r *run) exec(ctx context.Context, sc scope, st *workflow.State) outcome {
	if ctx.Err() != nil {
		return cancelledOutcome(ctx)
	}
	sc.state = st.Name
	if out, done := r.intercept(ctx, sc, st); done {
		return out
	}
	return r.publishStep(sc, st, func() outcome { return r.dispatch(ctx, sc, st) })
}

// dispatch runs a state by its type.
func (r *run) dispatch(ctx context.Context, sc scope, st *workflow.State) outcome {
	switch st.Type {
	case workflow.TypeStep:
		return r.execCommand(ctx, sc, st)
	case workflow.TypeTerminal:
		return r.execTerminal(sc, st)
	case workflow.TypeParallel:
		return r.execParallel(ctx, sc, st)
	case workflow.TypeForEach:
		return r.execForEach(ctx, sc, st)
	case workflow.TypeWhile:
		return r.execWhile(ctx, sc, st)
	case workflow.TypeCallWorkflow:
		return r.execCall(ctx, sc, st)
	case workflow.TypeOperation:
		return r.execOperation(ctx, sc, st)
	case workflow.TypeAgent:
		return r.execAgent(ctx, sc, st)
	}
	return r.execCustom(ctx, sc, st)
}

func (r *run) execTerminal(sc scope, st *workflow.State) outcome {
	sp := r.startSpan(sc, st.Name, transcript.KindTerminal, "", 0)
	msg, err := st.Message.Execute(r.data(sc))
	if err != nil {
		sp.end("failure", nil, err.Error())
		e := failed(err.Error())
		return outcome{exitCode: e.exitCode, err: err.Error(), end: &e}
	}
	code := exitcode.OK
	if st.Status == "failure" {
		code = exitcode.Execution
	}
	p := sp.end(st.Status, map[string]any{"status": st.Status, "message": msg}, "")
	if msg != "" {
		r.show(r.indent() + "■ " + r.shownMessage(p, msg))
	}
	e := &ending{status: st.Status, exitCode: code}
	if st.Status == "failure" {
		e.message = msg
		if msg == "" {
			e.message = fmt.Sprintf("terminal state %q", st.Name)
		}
	}
	return outcome{ok: st.Status == "success", exitCode: code, end: e}
}

// setState stores a state's result for later templates and expressions.
func (r *run) setState(name string, v map[string]any) {
	r.mu.Lock()
	r.states[name] = v
	if r.tstates == nil {
		r.tstates = map[string]map[string]any{}
	}
	r.tstates[name] = templateState(v)
	r.esnap, r.tsnap = nil, nil
	r.mu.Unlock()
}

// stateValue builds the template/expression view of a result (.states.X):
// Output is the step's output exactly as it came (a command's trailing
// newline included, as in AWF: trimSpace removes it), Status is AWF's
// completed, failed or cancelled.
func stateValue(o outcome, output, stderr string) map[string]any {
	st := workflow.StatusFailed
	switch {
	case o.cancelled:
		st = workflow.StatusCancelled
	case o.ok:
		st = workflow.StatusCompleted
	}
	v := map[string]any{
		"Output": output, "Stderr": stderr, "ExitCode": o.exitCode, "Status": st, "Error": o.err,
		"JSON": nil, "Response": nil, "Data": nil,
		"TokensUsed": int64(0), "TokensInput": int64(0), "TokensOutput": int64(0), "TokensEstimated": false,
	}
	if js := parseJSON(output); js != nil {
		// .Response is the spec's other name for parsed output; an
		// operation replaces it with its outputs (status_code, body, ...)
		v["JSON"] = js
		v["Response"] = js
	}
	return v
}

// shownMessage is a terminal state's message as the display shows it: as
// its completed event holds it, masked (p), or masked now when the span
// wrote nothing.
func (r *run) shownMessage(p *transcript.StepPayload, msg string) string {
	if p != nil {
		if res, ok := p.Result.(map[string]any); ok {
			if m, ok := res["message"].(string); ok {
				return m
			}
		}
	}
	return r.e.mask(msg)
}

// parseJSON returns output parsed as JSON when it is a JSON object or
// array, else nil.
func parseJSON(s string) any {
	s = strings.TrimSpace(s)
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return nil
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return nil
	}
	return v
}

// outputs evaluates the workflow's declared outputs.
func (r *run) outputs() (map[string]any, error) {
	if len(r.wf.Outputs) == 0 {
		return nil, nil
	}
	env := r.exprEnv(scope{})
	// An output is a value, not a condition: an input keeps the value it
	// was given, not the number or boolean a condition would read.
	env[workflow.NSInputs] = r.inputs
	out := make(map[string]any, len(r.wf.Outputs))
	for _, o := range r.wf.Outputs {
		v, err := o.From.Eval(env)
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", o.Name, err)
		}
		out[o.Name] = v
	}
	return out, nil
}

func (r *run) addUsage(u transcript.Usage, cost *float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.usage.Add(u)
	if cost != nil {
		c := *cost
		if r.cost != nil {
			c += *r.cost
		}
		r.cost = &c
	}
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
