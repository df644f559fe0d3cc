package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/workflow"
)

// AWF's external plugins (package plugin) reach a run at three places:
// an operation state whose operation is in a plugin's namespace
// (PLUGIN.OP), a state whose type is a plugin's step type (PLUGIN.TYPE),
// and the lifecycle events of the run and its states, published to the
// plugins that subscribe. A plugin that is not installed, disabled, or
// cannot start, and an operation or type the plugin does not offer, end
// the run at the state (on_failure is not followed), as an operation no
// provider offers does in AWF; a plugin that fails, crashes or does not
// answer in time fails the state like any step.

// pluginOpResult is a plugin operation's step result.
type pluginOpResult struct {
	*plugin.OperationResult
	Captured map[string]string `json:"captured,omitempty"`
}

// pluginOperation runs a plugin operation. ctx carries the state's
// timeout.
func (r *run) pluginOperation(ctx context.Context, path, name string, in map[string]any) (*pluginOpResult, outcome) {
	res, err := r.e.PluginHost.Operate(ctx, name, in)
	if err != nil {
		if o, unusable := pluginUnusable(path, err); unusable {
			return nil, o
		}
		o := outcomeOf(ctx, err)
		var ie *plugin.InputError
		o.final = errors.As(err, &ie)
		if res == nil {
			return nil, o
		}
		return &pluginOpResult{OperationResult: res}, o
	}
	show := r.newOutputWriter(path)
	if text := res.Text(); text != "" {
		fmt.Fprintln(show, text)
	}
	show.flush()
	if !res.Success {
		return &pluginOpResult{OperationResult: res}, fail("%s: %s", name, res.Error)
	}
	return &pluginOpResult{OperationResult: res}, outcome{ok: true}
}

// pluginUnusable is the outcome of a plugin that cannot serve the state:
// the run ends there.
func pluginUnusable(path string, err error) (outcome, bool) {
	code := exitcode.Execution
	switch {
	case errors.Is(err, plugin.ErrUnknown):
		// as an operation no provider offers: a user error
		code = exitcode.User
	case !errors.Is(err, plugin.ErrUnavailable):
		return outcome{}, false
	}
	o := fail("%v", err)
	o.final = true
	o.end = &ending{status: "failure", exitCode: code, message: fmt.Sprintf("state %s: %s", path, o.err)}
	return o, true
}

// pluginOpValue is the template view of a plugin operation's result, as
// AWF gives it: .Output the outputs as key=value lines, .Response the
// outputs (also .Data and .JSON, as for reel's built-in operations).
func pluginOpValue(o outcome, res *pluginOpResult) map[string]any {
	if res == nil {
		return stateValue(o, "", "")
	}
	v := stateValue(o, res.Text(), "")
	v["Response"], v["Data"], v["JSON"] = res.Outputs, res.Outputs, res.Outputs
	return v
}

// execPluginStep runs a state of a plugin's step type: its config (string
// templates rendered) and the workflow's inputs go to the plugin; its
// output and data are .states.NAME.Output and .Data; an exit code other
// than 0 fails the state as a command's does.
func (r *run) execPluginStep(ctx context.Context, sc scope, st *workflow.State) outcome {
	return r.attempts(ctx, st, func(t *try) outcome {
		sp := r.startStep(ctx, sc, st, st.Type, "", t)
		sctx, cancel := t.limit.context(ctx)
		defer cancel()
		cfg, err := renderConfig(st.Config, r.data(sc))
		if err != nil {
			o := fail("config: %v", err)
			o.final = true
			r.setState(st.Name, stateValue(o, "", ""))
			sp.finish(ctx, o, nil)
			return o
		}
		res, err := r.e.PluginHost.ExecuteStep(sctx, plugin.StepRequest{Type: st.Type, State: st.Name, Config: cfg, Inputs: r.inputs})
		var o outcome
		switch {
		case err != nil:
			var unusable bool
			if o, unusable = pluginUnusable(sp.path, err); !unusable {
				o = outcomeOf(sctx, err)
			}
		case res.ExitCode != 0:
			o = outcome{exitCode: res.ExitCode, err: fmt.Sprintf("%s: exit code %d", st.Type, res.ExitCode)}
			if res.Output != "" {
				o.err += ": " + firstLine(res.Output)
			}
		default:
			o = outcome{ok: true}
		}
		o = timedOut(ctx, sctx, o, t.limit)
		if res == nil {
			r.setState(st.Name, stateValue(o, "", ""))
			sp.finish(ctx, o, nil)
			return o
		}
		if res.Output != "" {
			show := r.newOutputWriter(sp.path)
			fmt.Fprintln(show, res.Output)
			show.flush()
		}
		v := stateValue(o, res.Output, "")
		if res.Data != nil {
			v["Data"] = res.Data
		}
		r.setState(st.Name, v)
		sp.finish(ctx, o, res)
		return o
	})
}

// renderConfig renders the templates in a step type's config strings.
func renderConfig(cfg map[string]any, data map[string]any) (map[string]any, error) {
	out, err := renderValue(cfg, data)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// renderValue renders every string of v as a template (a plugin step's
// config, which is loaded as plain values).
func renderValue(v any, data map[string]any) (any, error) {
	return mapLeaves(v, func(leaf any) (any, error) {
		s, ok := leaf.(string)
		if !ok {
			return leaf, nil
		}
		t, err := workflow.ParseTemplate(s)
		if err != nil {
			return nil, err
		}
		return t.Execute(data)
	})
}

// publish sends a lifecycle event of this run to the subscribed plugins.
func (r *run) publish(l plugin.Lifecycle) {
	if r.e.PluginHost == nil || r.planning {
		return
	}
	l.RunID, l.ParentRunID, l.Workflow, l.Version = r.id, r.parentID, r.wf.Name, r.wf.Version
	r.e.PluginHost.Publish(l)
}

// publishStep publishes a state's step.started and, once it is over,
// step.completed or step.failed (terminal states and a resume's pass
// through completed ones are not steps to subscribers).
func (r *run) publishStep(sc scope, st *workflow.State, run func() outcome) outcome {
	if r.e.PluginHost == nil || st.Type == workflow.TypeTerminal || sc.silent {
		return run()
	}
	path := joinPath(sc.prefix, st.Name)
	base := plugin.Lifecycle{Step: st.Name, Path: path, Kind: st.Type, Iteration: sc.iteration}
	started := time.Now()
	ev := base
	ev.Type = plugin.StepStarted
	r.publish(ev)
	out := run()
	ev = base
	ev.Type, ev.Duration = plugin.StepCompleted, time.Since(started)
	if !out.ok {
		ev.Type, ev.Error, ev.ExitCode = plugin.StepFailed, out.err, out.exitCode
	}
	r.publish(ev)
	return out
}

// publishRetry publishes step.retrying after a failed attempt that will
// be retried.
func (sp *span) publishRetry(o outcome) {
	sp.r.publish(plugin.Lifecycle{Type: plugin.StepRetrying, Step: sp.name, Path: sp.path, Kind: sp.kind, Iteration: sp.iter,
		Attempt: sp.attempt, MaxAttempts: sp.st.Retry.MaxAttempts, Error: o.err})
}

// publishEnd publishes workflow.completed or workflow.failed.
func (r *run) publishEnd(rep *Report) {
	l := plugin.Lifecycle{Type: plugin.WorkflowCompleted, Duration: rep.Duration, Status: rep.Status}
	if rep.Status != "success" {
		l.Type, l.Error = plugin.WorkflowFailed, rep.Error
		r.mu.Lock()
		l.FailedStep = r.lastState
		r.mu.Unlock()
	}
	r.publish(l)
}
