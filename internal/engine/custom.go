package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/workflow"
)

// StepRequest is what a custom step type receives.
type StepRequest struct {
	// Type is the state's type; Name its state name; Path its dot path.
	Type      string
	Name      string
	Path      string
	Iteration int
	RunID     string
	// Config is the state's config map, as written in the workflow.
	Config map[string]any
	// Inputs are the workflow's inputs.
	Inputs map[string]any
}

// StepResult is what a custom step type answers. Output is visible as
// {{.states.NAME.Output}}, Data as {{.states.NAME.Data.key}}.
type StepResult struct {
	Output string         `json:"output"`
	Data   map[string]any `json:"data,omitempty"`
}

// StepFunc implements a custom step type. An error fails the step.
type StepFunc func(ctx context.Context, req StepRequest) (StepResult, error)

// Register adds a custom step type. Register before the first Run.
func (e *Engine) Register(typ string, fn StepFunc) error {
	if fn == nil {
		return fmt.Errorf("register step type %q: nil function", typ)
	}
	for _, b := range workflow.BuiltinTypes {
		if b == typ {
			return fmt.Errorf("register step type %q: that is a built-in type", typ)
		}
	}
	if _, dup := e.custom[typ]; dup {
		return fmt.Errorf("register step type %q: already registered", typ)
	}
	if e.custom == nil {
		e.custom = map[string]StepFunc{}
	}
	e.custom[typ] = fn
	return nil
}

// Plugin is an executable step type. reel writes the step's request as
// JSON on its stdin and reads a StepResult as JSON from its stdout, with
// optional "error" (a non-empty one fails the step); a non-zero exit fails
// the step too. Plugins are configured in .reel/config.yaml (package project).
type Plugin = project.Plugin

func (r *run) execCustom(ctx context.Context, sc scope, st *workflow.State) outcome {
	_, registered := r.e.custom[st.Type]
	if _, executable := r.e.Plugins[st.Type]; !registered && !executable && r.e.PluginHost.ProvidesStepType(st.Type) {
		return r.execPluginStep(ctx, sc, st)
	}
	return r.attempts(ctx, st, func(t *try) outcome {
		sp := r.startStep(ctx, sc, st, st.Type, "", t)
		req := StepRequest{Type: st.Type, Name: st.Name, Path: sp.path, Iteration: sp.iter, RunID: r.id, Config: st.Config, Inputs: r.inputs}
		if req.Config == nil {
			req.Config = map[string]any{}
		}
		var res StepResult
		var err error
		if fn, ok := r.e.custom[st.Type]; ok {
			res, err = fn(ctx, req)
		} else if pl, ok := r.e.Plugins[st.Type]; ok {
			res, err = r.runPlugin(ctx, pl, req)
		} else {
			err = fmt.Errorf("no step type %q is registered or declared as a plugin", st.Type)
		}
		o := outcomeOf(ctx, err)
		v := stateValue(o, res.Output, "")
		if res.Data != nil {
			v["Data"] = res.Data
		}
		r.setState(st.Name, v)
		sp.finish(ctx, o, res)
		return o
	})
}

// runPlugin runs an executable step type in its own process group.
func (r *run) runPlugin(ctx context.Context, pl Plugin, req StepRequest) (StepResult, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return StepResult{}, fmt.Errorf("plugin %s: encode request: %w", req.Type, err)
	}
	pctx := ctx
	if pl.Timeout > 0 {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, pl.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(pctx, pl.Command, pl.Args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.Env = append(r.e.environ(), "REEL_RUN_ID="+r.id, "REEL_STEP_PATH="+req.Path)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Dir = r.e.Dir
	stdout := &cappedBuffer{limit: 16 << 20}
	stderr := &cappedBuffer{limit: r.e.outputLimit()}
	cmd.Stdout = stdout
	show := r.newOutputWriter(req.Path)
	cmd.Stderr = teeWriter{stderr, show}
	runErr := cmd.Run()
	show.flush()
	if pctx.Err() != nil && ctx.Err() == nil {
		return StepResult{}, fmt.Errorf("plugin %s timed out after %s", req.Type, pl.Timeout)
	}
	var answer struct {
		StepResult
		Error string `json:"error"`
	}
	if stdout.truncated {
		return StepResult{}, fmt.Errorf("plugin %s: answer exceeds 16 MiB", req.Type)
	}
	if out := bytes.TrimSpace([]byte(stdout.String())); len(out) > 0 {
		if err := json.Unmarshal(out, &answer); err != nil {
			return StepResult{}, fmt.Errorf("plugin %s: answer is not JSON: %v", req.Type, err)
		}
	}
	if runErr != nil {
		msg := fmt.Sprintf("plugin %s: %v", req.Type, runErr)
		if answer.Error != "" {
			msg += ": " + answer.Error
		} else if l := lastLine(stderr.String()); l != "" {
			msg += ": " + l
		}
		return answer.StepResult, errors.New(msg)
	}
	if answer.Error != "" {
		return answer.StepResult, fmt.Errorf("plugin %s: %s", req.Type, answer.Error)
	}
	return answer.StepResult, nil
}
