package engine

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// Hooks (docs/decisions.md §11). Each hook list runs as one command step nested
// under what it hooks: a state's at <path>.pre_hook / <path>.post_hook,
// inside the state's own step.started … step.completed; the workflow's at
// top level under the hook's name, after run.started and before
// run.completed. Semantics follow AWF: a failing step hook is recorded and
// the step goes on; a failing workflow_start command ends the run before
// its first state; workflow_end runs after a successful run,
// workflow_error after a failed one, workflow_cancel after a cancelled
// one, and none of them changes the run's outcome.

// hookGrace bounds the workflow_cancel and workflow_error hooks of a
// cancelled run, whose own context is done: Ctrl-C must still end reel.
const hookGrace = 30 * time.Second

// HookResult is the result of a hook step: the commands' combined output,
// each command's exit code in order, and the lines its log actions wrote.
// ExitCode is the first non-zero exit code (0 when all succeeded).
type HookResult struct {
	transcript.CommandResult
	ExitCodes []int    `json:"exit_codes"`
	Logs      []string `json:"logs,omitempty"`
}

// startStep starts the span of one attempt of st and, before its first
// attempt, runs its pre hooks inside it.
func (r *run) startStep(ctx context.Context, sc scope, st *workflow.State, kind, command string, t *try) *span {
	sp := r.startSpan(sc, st.Name, kind, command, t.attemptNo())
	sp.st, sp.sc, sp.try = st, sc, t
	// A block a resume passes through silently, and the resume's plan
	// walk, run no hooks: nothing of theirs runs.
	if st.Hooks != nil && len(st.Hooks.Pre) > 0 && t.attemptNo() <= 1 && !sc.silent && !r.planning {
		// the state's timeout bounds its pre hooks too, as in AWF
		limit := after(st.Timeout)
		if t != nil {
			limit = t.limit
		}
		r.runHooks(ctx, sc, sp.path, workflow.HookPre, st.Hooks.Pre, limit, r.data(sc), false)
	}
	return sp
}

// finish ends a state's span with its attempt's outcome. After the last
// attempt, and unless the run was cancelled, the state's post hooks run
// first (they see the state's result); a capture adds its variables to the
// result.
func (sp *span) finish(ctx context.Context, o outcome, result any) {
	st := sp.st
	if st != nil && willRetry(st, sp.try, o) && !sp.silent {
		sp.publishRetry(o)
	}
	if st != nil && !willRetry(st, sp.try, o) {
		if sp.try != nil && sp.try.outOfTime {
			// AWF's timeout bounds the whole state: say why the
			// attempts stop here
			o.err += fmt.Sprintf(" (not retried: the state's %s timeout ends before attempt %d could start)", st.Timeout, sp.try.n+1)
		}
		if st.Hooks != nil && len(st.Hooks.Post) > 0 && !o.cancelled && ctx.Err() == nil && !sp.silent && !sp.r.planning {
			// post hooks get a timeout of their own: they also run
			// after the state timed out (AWF's, given what is left of
			// it, would not)
			sp.r.runHooks(ctx, sp.sc, sp.path, workflow.HookPost, st.Hooks.Post, after(st.Timeout), sp.r.data(sp.sc), false)
		}
	}
	if st != nil && st.Capture != nil {
		result = sp.r.withCaptured(st, result)
	}
	if result == nil {
		sp.end(status(o), nil, o.err)
		return
	}
	sp.end(status(o), result, o.err)
}

// withCaptured returns result with the state's captured variables added.
func (r *run) withCaptured(st *workflow.State, result any) any {
	switch res := result.(type) {
	case transcript.CommandResult:
		res.Captured = st.Capture.Captured(res.Output, res.Stderr)
		return res
	case *transcript.AgentResult:
		if res == nil {
			return nil
		}
		c := *res
		c.Captured = st.Capture.Captured(res.Output, "")
		return &c
	case *httpResult:
		if res == nil {
			return nil
		}
		c := *res
		c.Captured = st.Capture.Captured(res.Body, "")
		return &c
	case *opResult:
		if res == nil {
			return nil
		}
		c := *res
		c.Captured = st.Capture.Captured(res.Output, "")
		return &c
	case *pluginOpResult:
		if res == nil {
			return nil
		}
		c := *res
		c.Captured = st.Capture.Captured(res.Text(), "")
		return &c
	}
	return result
}

// runHooks runs one hook list as a command step at at.which (or at which
// at top level) and reports whether every command succeeded. With
// stopOnFailure the list stops at its first failing command.
func (r *run) runHooks(ctx context.Context, sc scope, at, which string, actions []workflow.HookAction, limit deadline, data map[string]any, stopOnFailure bool) (bool, string) {
	sp := &span{r: r, path: joinPath(at, which), iter: sc.iteration, name: which, kind: transcript.KindCommand, start: time.Now(), hookOf: at}
	// Resolve every template first: step.started carries the commands.
	texts := make([]string, len(actions))
	var commands []string
	var resolveErr error
	for i, a := range actions {
		t := a.Log
		if a.Command != nil {
			t = a.Command
		}
		s, err := t.Execute(data)
		if err != nil && resolveErr == nil {
			resolveErr = fmt.Errorf("%s action %d: %w", which, i+1, err)
		}
		texts[i] = s
		if a.Command != nil {
			commands = append(commands, s)
		}
	}
	r.open(sp, strings.Join(commands, "\n"))
	res := HookResult{ExitCodes: []int{}}
	if resolveErr != nil {
		sp.end("failure", res, resolveErr.Error())
		return false, resolveErr.Error()
	}
	var out, errOut strings.Builder
	var failure string
	cancelled := false
	show := r.newOutputWriter(sp.path)
	for i, a := range actions {
		if a.Log != nil {
			res.Logs = append(res.Logs, texts[i])
			fmt.Fprintln(show, texts[i])
			show.flush()
			continue
		}
		if ctx.Err() != nil {
			cancelled = true
			break
		}
		l := limit
		if own := after(a.Timeout); own.timeout > 0 && (l.timeout == 0 || own.at.Before(l.at)) {
			l = own
		}
		cr, o := r.shell(ctx, sp.path, texts[i], "", l)
		out.WriteString(cr.Output)
		errOut.WriteString(cr.Stderr)
		res.Truncated = res.Truncated || cr.Truncated
		res.ExitCodes = append(res.ExitCodes, cr.ExitCode)
		if o.cancelled {
			cancelled = true
			break
		}
		if !o.ok && failure == "" {
			res.ExitCode = cr.ExitCode
			failure = fmt.Sprintf("command %d of %d: %s", len(res.ExitCodes), len(commands), o.err)
			if stopOnFailure {
				break
			}
		}
	}
	res.Output, res.Stderr = capText(out.String(), r.e.outputLimit(), &res.Truncated), capText(errOut.String(), r.e.outputLimit(), &res.Truncated)
	res.DurationMS = time.Since(sp.start).Milliseconds()
	switch {
	case cancelled:
		sp.end("cancelled", res, cancelReason(ctx))
		return false, cancelReason(ctx)
	case failure != "":
		sp.end("failure", res, failure)
		return false, failure
	}
	sp.end("success", res, "")
	return true, ""
}

// capText cuts s at limit bytes, noting the cut.
func capText(s string, limit int, truncated *bool) string {
	if len(s) <= limit {
		return s
	}
	*truncated = true
	return s[:limit]
}

// hooked runs the state machine between the workflow's hooks. A single
// step (--step) runs its own pre and post hooks but not the workflow's, as
// AWF's does: a hook that announces or deploys a run is not for testing
// one step.
func (r *run) hooked(ctx context.Context, machine func(context.Context) ending) ending {
	h := r.wf.Hooks
	if h == nil || r.step != "" {
		return machine(ctx)
	}
	if len(h.Start) > 0 {
		if ok, why := r.runHooks(ctx, scope{}, "", workflow.HookWorkflowStart, h.Start, deadline{}, r.data(scope{}), true); !ok {
			if ctx.Err() != nil {
				return cancelledEnding(ctx)
			}
			return failed("workflow_start hook failed: " + why)
		}
	}
	end := machine(ctx)
	hctx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), hookGrace)
		defer cancel()
	}
	switch {
	case end.status == "cancelled" && len(h.Cancel) > 0:
		r.runHooks(hctx, scope{}, "", workflow.HookWorkflowCancel, h.Cancel, deadline{}, r.data(scope{}), false)
	case end.status == "failure" && len(h.Error) > 0:
		r.runHooks(hctx, scope{}, "", workflow.HookWorkflowError, h.Error, deadline{}, r.errorData(end), false)
	case end.status == "success" && len(h.End) > 0:
		r.runHooks(hctx, scope{}, "", workflow.HookWorkflowEnd, h.End, deadline{}, r.data(scope{}), false)
	}
	return end
}

// errorData is the template data of the workflow_error hook: the run's
// data and .error, as AWF names its fields.
func (r *run) errorData(end ending) map[string]any {
	data := maps.Clone(r.data(scope{}))
	r.mu.Lock()
	last := r.lastState
	r.mu.Unlock()
	data["error"] = map[string]any{"Message": end.message, "State": last, "ExitCode": end.exitCode, "Type": "execution"}
	return data
}
