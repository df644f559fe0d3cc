// Package launch starts, cancels and resumes workflow runs inside a
// long-lived process: reel serve's HTTP API and web view, and any other
// front end that drives runs for someone else (an editor's agent panel, a
// terminal UI).
//
// What it decides:
//
//   - A launched run is an ordinary reel run: the engine records it in the
//     storage like `reel run` does (transcript, audit trail), so the run
//     list, the web view, `reel runs` and `reel resume` see it as any
//     other. Its run id is fixed before it starts, and Start returns only
//     once run.started is in the transcript: whoever is handed the id can
//     follow the file from there.
//   - A run belongs to no request: it lives on after the call that started
//     it returns, until it ends, is cancelled, or the launcher closes.
//   - Refusals come back before anything is recorded: a workflow that
//     cannot be found (workflow.ErrNotFound) or is invalid
//     (workflow.Problems), inputs that do not fit (*engine.InputError), an
//     unset variable the workflow's env lists (*engine.EnvError). Resume
//     refuses with ErrNoRun, *engine.ResumeError (a run that succeeded, is
//     running or is a sub-workflow) or ErrResume (the workflow file is
//     gone, the transcript unreadable).
//   - Cancel cancels the run's context with a cause the transcript
//     records; the engine sends its process groups SIGTERM and, after
//     Engine.KillGrace, SIGKILL, and the run ends `cancelled` with its
//     run.completed. Cancel waits for that. Close cancels every run still
//     going and waits for them, so a server that stops leaves cancelled
//     runs, resumable, rather than interrupted ones.
//   - It remembers the runs it started (Runs), the ended ones up to
//     Config.Keep, so a long-lived server's memory stays bounded.
package launch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// DefaultKeep is how many ended runs a Launcher remembers by default.
const DefaultKeep = 1000

// Errors.
var (
	// ErrClosed is returned by Start and Resume after Close.
	ErrClosed = errors.New("the launcher is closed")
	// ErrNoRun is returned for a run id the storage does not hold.
	ErrNoRun = errors.New("no such run")
	// ErrNotLaunched is returned by Cancel for a run this launcher did not
	// start (one started by another process, or unknown).
	ErrNotLaunched = errors.New("run not started here")
	// ErrResume wraps why a run's workflow or transcript cannot be read
	// again for a resume.
	ErrResume = errors.New("cannot resume")
)

// Config configures a Launcher.
type Config struct {
	// Engine runs the workflows, configured for the project (its storage,
	// plugins, project directory). It is shared by every run.
	Engine *engine.Engine
	// Defaults are input values from the project configuration
	// (engine.RunOptions.Defaults).
	Defaults map[string]any
	// OnEnd, when set, is called after each run ended and its transcript
	// closed (the server updates its run index there).
	OnEnd func(*Run)
	// Keep bounds how many ended runs are remembered (DefaultKeep when 0).
	Keep int
}

// Launcher starts runs and keeps track of them. Its methods are safe for
// concurrent use.
type Launcher struct {
	cfg Config
	wg  sync.WaitGroup

	mu     sync.Mutex
	runs   map[string]*Run
	order  []*Run // oldest first
	closed bool
}

// New returns a launcher running workflows with cfg.Engine.
func New(cfg Config) *Launcher {
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	return &Launcher{cfg: cfg, runs: map[string]*Run{}}
}

// Engine is the engine the launcher runs workflows with.
func (l *Launcher) Engine() *engine.Engine { return l.cfg.Engine }

// Run is a run the launcher started (or resumed).
type Run struct {
	// ID is the run id.
	ID string
	// Workflow is the workflow's name.
	Workflow string
	// Transcript is the transcript's path (empty with the engine's
	// NoTranscript).
	Transcript string
	// Attempt is 1 for a run Start started, 2 and more for a resume.
	Attempt int
	// Started is when the launcher started it.
	Started time.Time
	// Ignored are the inputs given to Start that the workflow does not
	// declare: left out, as AWF and `reel run` leave them, for the caller
	// to warn about.
	Ignored []string

	cancel context.CancelCauseFunc
	done   chan struct{}

	mu     sync.Mutex
	report *engine.Report
}

// Done is closed once the run ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Report is the ended run's report; nil while it runs.
func (r *Run) Report() *engine.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.report
}

// Wait waits for the run to end, or for ctx.
func (r *Run) Wait(ctx context.Context) (*engine.Report, error) {
	select {
	case <-r.done:
		return r.Report(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Start finds the workflow ref names (as `reel run REF` does: a path, a
// NAME in catalog order, or PACK/WORKFLOW), checks inputs (as text, as
// --input gives them; the ones the workflow does not declare are left out,
// in Run.Ignored) and starts the run. It returns once run.started is
// recorded; the run goes on after ctx ends.
func (l *Launcher) Start(ctx context.Context, ref string, inputs map[string]string) (*Run, error) {
	e := l.cfg.Engine
	wf, err := e.LoadWorkflow(ref)
	if err != nil {
		return nil, err
	}
	ignored := wf.Undeclared(inputs)
	if len(ignored) > 0 {
		inputs = maps.Clone(inputs)
		for _, k := range ignored {
			delete(inputs, k)
		}
	}
	opts := engine.RunOptions{Inputs: inputs, Defaults: l.cfg.Defaults, RunID: transcript.NewRunID()}
	if err := e.Check(wf, opts); err != nil {
		return nil, err
	}
	run := &Run{ID: opts.RunID, Workflow: wf.Name, Attempt: 1, Ignored: ignored}
	return l.launch(ctx, run, func(ctx context.Context, started func(string, string)) (*engine.Report, error) {
		opts.OnStart = started
		return e.Run(ctx, wf, opts)
	})
}

// ResumeOptions parameterize Resume.
type ResumeOptions struct {
	// Inputs override recorded inputs, as text.
	Inputs map[string]string
	// From runs this state's latest execution, and everything recorded
	// after it, again (engine.ResumeOptions.From).
	From string
}

// Resume continues the run id of the engine's storage, as `reel resume`
// does, in the same transcript. It returns once the new attempt's
// run.started is recorded.
func (l *Launcher) Resume(ctx context.Context, id string, opts ResumeOptions) (*Run, error) {
	e := l.cfg.Engine
	if err := transcript.ValidRunID(id); err != nil {
		return nil, fmt.Errorf("%w: %q is not a run id", ErrNoRun, id)
	}
	found, err := runs.NewStore(e.Storage, runs.Options{}).ID(id)
	if err != nil {
		if errors.Is(err, runs.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s in %s", ErrNoRun, id, e.Storage)
		}
		return nil, err
	}
	path := found.Path
	if r, ok := l.Get(id); ok && r.Report() == nil {
		return nil, &engine.ResumeError{RunID: id, Reasons: []string{"it is still running"}}
	}
	t, err := LoadResume(e, path, "")
	if err != nil {
		return nil, err
	}
	run := &Run{ID: id, Workflow: t.Workflow.Name, Attempt: t.Run.Attempts() + 1}
	return l.launch(ctx, run, func(ctx context.Context, started func(string, string)) (*engine.Report, error) {
		rep, err := e.Resume(ctx, t.Workflow, t.Run, engine.ResumeOptions{Inputs: opts.Inputs, From: opts.From, ReplayFrom: t.ReplayFrom, OnStart: started})
		if errors.Is(err, transcript.ErrLocked) {
			err = &engine.ResumeError{RunID: id, Reasons: []string{"it is still running (another process writes its transcript)"}}
		}
		return rep, err
	})
}

// ResumeTarget is what a resume needs, read from a run's transcript.
type ResumeTarget struct {
	// Run is the recorded run, with its exchange.
	Run *rerun.Run
	// Workflow is the run's workflow, read again.
	Workflow *workflow.Workflow
	// ReplayFrom is the recording a replayed run took its agent replies
	// from, when it was a replay (a resumed replay goes on replaying).
	ReplayFrom *rerun.Run
}

// LoadResume reads what resuming the run recorded at path needs: the run,
// its workflow (from wfFile, else from the file the run recorded) and the
// recording it replayed. Errors wrap ErrResume, but for an invalid or
// missing workflow named by wfFile (the engine's load errors).
func LoadResume(e *engine.Engine, path, wfFile string) (*ResumeTarget, error) {
	// the exchange rebuilds the conversations of kept agent steps
	rec, err := rerun.Load(path, rerun.Options{Exchange: true})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrResume, err)
	}
	t := &ResumeTarget{Run: rec}
	if wfFile == "" {
		src := rec.Input().Workflow
		if src == nil {
			return nil, fmt.Errorf("%w: run %s does not record its workflow file (it was written by an older reel or another tool): name it with --workflow FILE", ErrResume, rec.RunID)
		}
		wfFile = src.File
		if _, err := os.Stat(wfFile); err != nil {
			return nil, fmt.Errorf("%w: run %s ran %s, which is gone (%v): name the workflow with --workflow FILE", ErrResume, rec.RunID, wfFile, err)
		}
	}
	if t.Workflow, err = e.LoadWorkflow(wfFile); err != nil {
		return nil, err
	}
	if replayed := rec.Input().ReplayFrom; replayed != "" {
		// A replay resumes as a replay: the recording it took its agent
		// replies from, in the same storage, never the providers.
		storage := filepath.Dir(filepath.Dir(path))
		src, err := runs.NewStore(storage, runs.Options{}).ID(replayed)
		if err == nil {
			t.ReplayFrom, err = rerun.Load(src.Path, rerun.Options{Exchange: true})
		}
		if err != nil {
			return nil, fmt.Errorf("%w: run %s replays run %s, which cannot be read (%v): a resumed replay takes its agent replies from the same recording", ErrResume, rec.RunID, replayed, err)
		}
	}
	return t, nil
}

// launch runs do in its own goroutine and returns once it started (or
// could not).
func (l *Launcher) launch(ctx context.Context, run *Run, do func(ctx context.Context, started func(id, path string)) (*engine.Report, error)) (*Run, error) {
	rctx, cancel := context.WithCancelCause(context.Background())
	run.cancel, run.done, run.Started = cancel, make(chan struct{}), time.Now()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		cancel(nil)
		return nil, ErrClosed
	}
	prev := l.runs[run.ID]
	if prev != nil && prev.Report() == nil {
		l.mu.Unlock()
		cancel(nil)
		return nil, &engine.ResumeError{RunID: run.ID, Reasons: []string{"it is still running"}}
	}
	l.add(run)
	l.wg.Add(1)
	l.mu.Unlock()

	started := make(chan struct{})
	refused := make(chan error, 1)
	go func() {
		defer l.wg.Done()
		defer cancel(nil)
		rep, err := do(rctx, func(_, path string) {
			run.Transcript = path // read after started is closed
			close(started)
		})
		if err != nil {
			l.forget(run, prev)
			close(run.done)
			refused <- err
			return
		}
		run.mu.Lock()
		run.report = rep
		run.mu.Unlock()
		l.ended()
		if l.cfg.OnEnd != nil {
			l.cfg.OnEnd(run)
		}
		close(run.done)
	}()
	select {
	case <-started:
		return run, nil
	case err := <-refused:
		return nil, err
	case <-ctx.Done():
		// The caller stopped waiting: the run goes on (or is refused)
		// without it.
		return nil, ctx.Err()
	}
}

// add records run; l.mu is held.
func (l *Launcher) add(run *Run) {
	if prev := l.runs[run.ID]; prev != nil {
		l.order = slices.DeleteFunc(l.order, func(r *Run) bool { return r == prev })
	}
	l.runs[run.ID] = run
	l.order = append(l.order, run)
}

// forget drops a run that was refused, putting back the one it replaced.
func (l *Launcher) forget(run, prev *Run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.order = slices.DeleteFunc(l.order, func(r *Run) bool { return r == run })
	delete(l.runs, run.ID)
	if prev != nil {
		l.add(prev)
	}
}

// ended drops the oldest ended runs past Keep.
func (l *Launcher) ended() {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.order {
		if r.Report() != nil {
			n++
		}
	}
	for i := 0; n > l.cfg.Keep && i < len(l.order); {
		r := l.order[i]
		if r.Report() == nil {
			i++
			continue
		}
		l.order = slices.Delete(l.order, i, i+1)
		delete(l.runs, r.ID)
		n--
	}
}

// Get returns the run id when this launcher started it and remembers it.
func (l *Launcher) Get(id string) (*Run, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.runs[id]
	return r, ok
}

// Runs lists the runs the launcher started and remembers, newest first.
func (l *Launcher) Runs() []*Run {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.order)
	slices.Reverse(out)
	return out
}

// Cancel cancels run id with cause (recorded in its run.completed) and
// waits until it ended or ctx ends. A run that already ended is not an
// error; a run this launcher did not start is ErrNotLaunched.
func (l *Launcher) Cancel(ctx context.Context, id string, cause error) error {
	r, ok := l.Get(id)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotLaunched, id)
	}
	r.cancel(cause)
	_, err := r.Wait(ctx)
	return err
}

// Close cancels every run still going, with cause, refuses new ones and
// waits for the runs to end, or for ctx.
func (l *Launcher) Close(ctx context.Context, cause error) error {
	l.mu.Lock()
	l.closed = true
	live := slices.Clone(l.order)
	l.mu.Unlock()
	for _, r := range live {
		r.cancel(cause)
	}
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
