package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"github.com/reelhq/reel/internal/agent"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// execAgent runs an agent step through package agent, recording what the
// provider streams under the step's path and iteration. A step with a
// conversation runs every turn inside its one step.started/step.completed
// pair; a retry attempt starts a fresh provider session from turn 1.
func (r *run) execAgent(ctx context.Context, sc scope, st *workflow.State) outcome {
	return r.attempts(ctx, st, func(attempt int) outcome {
		data := r.data(sc)
		prompt, perr := r.prompt(st, data)
		var sys string
		if perr == nil {
			sys, perr = st.SystemPrompt.Execute(data)
		}
		sp := r.startStep(ctx, sc, st, transcript.KindAgent, "", attempt)
		if perr != nil {
			o := fail("%v", perr)
			r.setState(st.Name, stateValue(o, "", ""))
			sp.finish(ctx, o, nil)
			return o
		}
		actx := ctx
		if st.Timeout > 0 {
			var cancel context.CancelFunc
			actx, cancel = context.WithTimeout(ctx, st.Timeout)
			defer cancel()
		}
		format := st.OutputFormat
		if format == "" {
			format = "text"
		}
		req := agent.Request{
			Provider:     st.Provider,
			Prompt:       prompt,
			SystemPrompt: sys,
			Options:      r.agentOptions(st.Options),
			OutputFormat: format,
			Dir:          r.e.workDir(),
			Env:          r.e.environ(),
		}
		var res *transcript.AgentResult
		sess, err := agent.NewSession(req, func(ev transcript.ExchangeEvent) error {
			ev.Path, ev.Iteration = sp.path, sp.iter
			r.emit(ev)
			return nil
		})
		if err == nil {
			show := r.newOutputWriter(sp.path)
			turns := len(st.Conversation) + 1
			res, err = converse(actx, sess, st, data, prompt, func(n int, output string) {
				if turns > 1 {
					fmt.Fprintf(show, "turn %d/%d\n", n, turns)
				}
				fmt.Fprintln(show, output)
			})
			show.flush()
		}
		var o outcome
		switch {
		case ctx.Err() != nil:
			o = cancelledOutcome(ctx)
		case err != nil && errors.Is(actx.Err(), context.DeadlineExceeded):
			o = fail("timed out after %s", st.Timeout)
			o.exitCode = exitTimeout
		case err != nil:
			o = fail("%v", err)
		default:
			o = outcome{ok: true}
		}
		var output string
		if res != nil {
			output = res.Output
			r.addUsage(res.Usage, res.CostUSD)
		}
		v := stateValue(o, output, "")
		if res != nil {
			v["TokensUsed"] = res.Usage.TotalTokens
		}
		r.setState(st.Name, v)
		if res != nil {
			sp.finish(ctx, o, res)
		} else {
			sp.finish(ctx, o, nil)
		}
		return o
	})
}

// agentOptions resolves a relative options.command path ("./x", "dir/x")
// against the workflow file's directory, like script_file and
// prompt_file, so a workflow shipping its own wrapper runs from anywhere. A
// bare name is left for $PATH.
func (r *run) agentOptions(opts map[string]any) map[string]any {
	cmd, ok := opts["command"].(string)
	if !ok || filepath.IsAbs(cmd) || !strings.Contains(cmd, "/") || r.wf.File == "" {
		return opts
	}
	out := maps.Clone(opts)
	p := filepath.Join(filepath.Dir(r.wf.File), cmd)
	if !strings.Contains(p, "/") {
		// Join drops "./" for a workflow in the working directory; a bare
		// name would be looked up on $PATH instead.
		p = "./" + p
	}
	out["command"] = p
	return out
}

// prompt resolves prompt or prompt_file (a template read at run time,
// relative to the workflow file).
func (r *run) prompt(st *workflow.State, data map[string]any) (string, error) {
	if st.Prompt != nil {
		s, err := st.Prompt.Execute(data)
		if err != nil {
			return "", fmt.Errorf("prompt: %w", err)
		}
		return s, nil
	}
	body, p, err := r.readStepFile(workflow.Prompts, "prompt_file", st.PromptFile, data)
	if err != nil {
		return "", err
	}
	t, err := workflow.ParseTemplate(body)
	if err != nil {
		return "", fmt.Errorf("prompt_file %s: %w", p, err)
	}
	return t.Execute(data)
}
