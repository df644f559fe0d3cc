package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// lifecycle is what a run carries for the ways of running beside a plain
// run: a resume (resume.go), a replay of recorded agent replies
// (replay.go), interactive pauses (interactive.go) and a single step
// (single.go). The run loop calls into it at three places: execute writes
// what lifecycle says into run.started, walk picks the state machine or the
// single step, and exec asks intercept before running any state.
type lifecycle struct {
	// attempt counts the runs of the transcript (0 for a first run, then
	// 2, 3, … for each resume); ran is the earlier attempts' running time.
	attempt int
	ran     time.Duration
	past    *past
	replay  *replaySource
	pause   PauseFunc
	turns   TurnFunc
	step    string
	mocks   map[string]string
	onStart func(runID, transcriptPath string)
	// planning marks the plan walk of a resume (resume.go): it shows,
	// writes and runs nothing, not even hooks.
	planning bool
}

// OptionError reports run options that do not fit the workflow: a --step
// or --mock naming nothing in it.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// lifecycleFor checks the options a run is started with, before anything
// is created, so that a refused run leaves no file behind.
func (e *Engine) lifecycleFor(wf *workflow.Workflow, opts RunOptions) (lifecycle, error) {
	lc := lifecycle{pause: opts.Pause, turns: opts.Turns, onStart: opts.OnStart}
	if opts.ReplayFrom != nil {
		lc.replay = newReplaySource(opts.ReplayFrom, opts.AllowPromptDrift)
	}
	if opts.Step != "" {
		if _, ok := wf.States[opts.Step]; !ok {
			return lc, &OptionError{fmt.Sprintf("--step %s: no such state in workflow %s%s", opts.Step, wf.Name, suggestState(wf, opts.Step))}
		}
		if err := checkMocks(wf, opts.Mocks); err != nil {
			return lc, &OptionError{err.Error()}
		}
		lc.step, lc.mocks = opts.Step, opts.Mocks
	} else if len(opts.Mocks) > 0 {
		return lc, &OptionError{"--mock needs --step: mocked results stand in for the states a single step reads"}
	}
	return lc, nil
}

// transcriptPath is where the run's transcript is, "" when it has none.
func (r *run) transcriptPath() string {
	if r.rec == nil {
		return ""
	}
	return r.rec.Path()
}

// attemptField is run.started's and run.completed's attempt: omitted for
// a first run.
func (r *run) attemptField() int {
	if r.attempt > 1 {
		return r.attempt
	}
	return 0
}

// startInput is the Input of run.started: the resolved inputs and the
// workflow's identity, which a resume checks the file against, and how the
// run was started when it was not a plain run.
func (r *run) startInput() transcript.RunInput {
	in := transcript.RunInput{Inputs: r.inputs}
	if r.wf.SHA256 != "" {
		file := r.wf.File
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
		in.Workflow = &transcript.WorkflowSource{File: file, SHA256: r.wf.SHA256, States: r.wf.StateDigests}
	}
	if r.past != nil {
		in.Reused = r.past.reusedRanges()
	}
	if r.replay != nil {
		in.ReplayFrom = r.replay.rec.RunID
	}
	in.Step, in.Mocks = r.step, r.mocks
	return in
}

// walk runs the state machine, or the single step a --step run asked for.
func (r *run) walk(ctx context.Context) ending {
	if r.step != "" {
		return r.single(ctx)
	}
	return r.machine(ctx)
}

// intercept runs before every state. It answers for the state when a
// resume keeps the state's recorded result, when a block an earlier attempt
// completed is passed through silently, or when the user skips or aborts
// at an interactive pause; otherwise exec runs the state.
func (r *run) intercept(ctx context.Context, sc scope, st *workflow.State) (outcome, bool) {
	if sc.hooked == st {
		return outcome{}, false
	}
	if r.past != nil {
		if out, ok := r.past.intercept(ctx, r, sc, st); ok {
			return out, true
		}
	}
	if r.pause != nil {
		return r.pauseAt(ctx, sc, st)
	}
	return outcome{}, false
}

// inherit passes the lifecycle a child run shares with its parent:
// interactive pauses and the source of conversation turns go on into
// sub-workflows.
func (r *run) inherit(child *run) {
	child.pause = r.pause
	child.turns = r.turns
}
