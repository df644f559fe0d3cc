package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reelhq/reel/internal/agent"
	"github.com/reelhq/reel/internal/agentfiles"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// execAgent runs an agent step through package agent, recording what the
// provider streams under the step's path and iteration. A step with a
// conversation runs every turn inside its one step.started/step.completed
// pair; a retry attempt starts a fresh provider session from turn 1 (or
// from the session it continues).
func (r *run) execAgent(ctx context.Context, sc scope, st *workflow.State) outcome {
	return r.attempts(ctx, st, func(t *try) outcome {
		data := r.data(sc)
		sp := r.startStep(ctx, sc, st, transcript.KindAgent, "", t)
		req, perr := r.agentRequest(st, data)
		if perr != nil {
			o := unrenderable(sc, perr)
			r.setState(st.Name, stateValue(o, "", ""))
			sp.finish(ctx, o, nil)
			return o
		}
		if r.replay != nil {
			return r.replayAgent(ctx, st, sp, req.Prompt, req.SystemPrompt)
		}
		actx, cancel := t.limit.context(ctx)
		defer cancel()
		var res *transcript.AgentResult
		var conv *conversationLog
		sess, err := agent.NewSession(req, func(ev transcript.ExchangeEvent) error {
			ev.Path, ev.Iteration = sp.path, sp.iter
			r.emit(ev)
			return nil
		})
		if err == nil {
			show := r.newOutputWriter(sp.path)
			// the user answers the replies: they show whatever StepOutput says
			show.live = talksToUser(st)
			res, conv, err = r.converse(actx, sess, st, sc, data, req, show)
			show.flush()
			if st.Tracked() {
				r.setSession(st.Name, sess.Snapshot(), sp.path)
			}
		}
		var o outcome
		switch {
		case ctx.Err() != nil:
			o = cancelledOutcome(ctx)
		case err != nil && errors.Is(actx.Err(), context.DeadlineExceeded):
			o = fail("timed out after %s", t.limit)
			o.exitCode = exitTimeout
		case err != nil:
			o = fail("%v", err)
		default:
			o = outcome{ok: true}
		}
		if res != nil && req.Continue != nil {
			res.ContinuedFrom = r.sessionPath(st.Agent.Session.ContinueFrom)
		}
		return r.agentDone(ctx, st, sp, o, res, conv)
	})
}

// agentDone ends an agent step: its tokens go into the run's totals, its
// reply (and conversation) where templates read it, its result into
// step.completed.
func (r *run) agentDone(ctx context.Context, st *workflow.State, sp *span, o outcome, res *transcript.AgentResult, conv *conversationLog) outcome {
	var output string
	if res != nil {
		output = res.Output
		r.addUsage(res.Usage, res.CostUSD)
	}
	r.setState(st.Name, agentStateValue(stateValue(o, output, ""), res, conv))
	if res != nil {
		sp.finish(ctx, o, res)
	} else {
		sp.finish(ctx, o, nil)
	}
	return o
}

// agentRequest resolves what one execution of an agent step sends: the
// provider (a template is rendered here), the prompt behind its skills,
// the system prompt behind its role, the options rendered, and the
// session it continues.
func (r *run) agentRequest(st *workflow.State, data map[string]any) (agent.Request, error) {
	var req agent.Request
	a := st.Agent
	if a == nil {
		a = &workflow.AgentSpec{}
	}
	provider := st.Provider
	if a.ProviderTemplate != nil {
		p, err := a.ProviderTemplate.Execute(data)
		if err != nil {
			return req, fmt.Errorf("provider: %w", err)
		}
		provider = strings.TrimSpace(p)
		if !slices.Contains(agent.Providers(), provider) {
			return req, fmt.Errorf("provider %q (from %s) is not a known provider (one of %s)", provider, st.Provider, strings.Join(agent.Providers(), ", "))
		}
	}
	prompt, err := r.prompt(st, data)
	if err != nil {
		return req, err
	}
	files := r.e.agentFiles()
	base := r.wfDir()
	if len(a.Skills) > 0 {
		skills := make([]*agentfiles.Skill, 0, len(a.Skills))
		for _, ref := range a.Skills {
			var s *agentfiles.Skill
			if ref.Path != "" {
				s, err = files.SkillAt(ref.Path, base)
			} else {
				s, err = files.Skill(ref.Name)
			}
			if err != nil {
				return req, fmt.Errorf("skills: %w", err)
			}
			skills = append(skills, s)
		}
		prompt = agentfiles.WithSkills(skills, prompt)
	}
	sys, err := st.SystemPrompt.Execute(data)
	if err != nil {
		return req, fmt.Errorf("system_prompt: %w", err)
	}
	if a.Role != nil {
		ref, err := a.Role.Execute(data)
		if err != nil {
			return req, fmt.Errorf("role: %w", err)
		}
		if ref = strings.TrimSpace(ref); ref != "" {
			role, err := files.Role(ref, base)
			if err != nil {
				return req, fmt.Errorf("role: %w", err)
			}
			sys = agentfiles.SystemPrompt(role, sys)
		}
	}
	opts, err := workflow.RenderOptions(st.Options, data)
	if err != nil {
		return req, err
	}
	req = agent.Request{
		Provider:     provider,
		Prompt:       prompt,
		SystemPrompt: sys,
		Options:      r.agentOptions(opts),
		OutputFormat: st.OutputFormat,
		Dir:          r.e.workDir(),
		Env:          r.e.environ(),
	}
	if c := a.Session; c != nil && c.ContinueFrom != "" {
		snap, err := r.session(c.ContinueFrom)
		if err != nil {
			return req, fmt.Errorf("conversation.continue_from: %w", err)
		}
		req.Continue = snap
	}
	return req, nil
}

// wfDir is the directory of the workflow file, where relative paths in it
// are resolved.
func (r *run) wfDir() string {
	if r.wf.File == "" {
		return r.e.workDir()
	}
	return filepath.Dir(r.wf.File)
}

// agentFiles finds skills and roles for the engine's project.
func (e *Engine) agentFiles() *agentfiles.Finder {
	dir := e.ProjectDir
	if dir == "" {
		dir = e.workDir()
	}
	return &agentfiles.Finder{ProjectDir: dir, Env: e.environ()}
}

// sessionEntry is the provider session an agent step left behind.
type sessionEntry struct {
	snap *agent.Snapshot
	path string
}

func (r *run) setSession(name string, snap *agent.Snapshot, path string) {
	snap.From = fmt.Sprintf("step %q", name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessions == nil {
		r.sessions = map[string]sessionEntry{}
	}
	r.sessions[name] = sessionEntry{snap, path}
}

// session returns the session the latest execution of step name left.
func (r *run) session(name string) (*agent.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.sessions[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("step %q has not run yet in this run", name)
	case e.snap.Empty():
		return nil, fmt.Errorf("step %q has no session id or conversation history to resume", name)
	}
	return e.snap, nil
}

func (r *run) sessionPath(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[name].path
}

// agentStateValue adds an agent step's own fields to its state value:
// token counts as AWF names them and, for a multi-turn step, the
// conversation.
func agentStateValue(v map[string]any, res *transcript.AgentResult, conv *conversationLog) map[string]any {
	if res == nil {
		return v
	}
	v["TokensUsed"] = res.Usage.TotalTokens
	v["TokensInput"] = res.Usage.InputTokens
	v["TokensOutput"] = res.Usage.OutputTokens
	// reel records what the provider reports and never estimates.
	v["TokensEstimated"] = false
	if conv != nil {
		turns := make([]any, 0, len(conv.turns))
		for _, t := range conv.turns {
			turns = append(turns, map[string]any{"Role": t.role, "Content": t.content})
		}
		v["Conversation"] = map[string]any{
			"SessionID":   res.SessionID,
			"Turns":       turns,
			"TotalTurns":  len(turns),
			"TotalTokens": res.Usage.TotalTokens,
			"StoppedBy":   res.StoppedBy,
		}
	}
	return v
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
