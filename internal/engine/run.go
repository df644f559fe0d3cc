package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// run is one execution of one workflow (a child run has its own).
type run struct {
	e        *Engine
	wf       *workflow.Workflow
	id       string
	parentID string
	inputs   map[string]any
	env      map[string]any
	context  map[string]any    // the .context namespace
	awf      map[string]string // the .awf namespace
	depth    int
	stack    []string // absolute workflow files from the root run down
	// shownName is the workflow's name as the audit trail and the display
	// show it (masked once, see mask.go).
	shownName string
	audit     *auditLog
	rec       *transcript.Recorder
	halt      context.CancelCauseFunc // see failure.go

	mu      sync.Mutex
	states  map[string]map[string]any
	tstates map[string]map[string]any // states as templates see them (see data)
	// esnap and tsnap are the states as data() hands them out, until the
	// next setState (see namespaces)
	esnap, tsnap map[string]any
	tinputs      map[string]any // inputs as templates see them
	einputs      map[string]any // inputs as expressions see them
	// lastState is the top-level state started last (.error.State of the
	// workflow_error hook).
	lastState string
	usage     transcript.Usage
	cost      *float64
	recErr    error
	started   time.Time
	// sessions are the provider sessions agent steps left, by state name,
	// for conversation.continue_from.
	sessions map[string]sessionEntry

	lifecycle // resume, replay, interactive and single-step state (lifecycle.go)
}

// newRun makes a run of wf and opens its transcript (none with
// NoTranscript).
func (e *Engine) newRun(wf *workflow.Workflow, id, parentID string, inputs map[string]any, depth int, stack []string, audit *auditLog) (*run, error) {
	r := &run{
		e: e, wf: wf, id: id, parentID: parentID, inputs: inputs,
		depth: depth, stack: stack, audit: audit,
		states: make(map[string]map[string]any, len(wf.States)),
		env:    envMap(e.environ()),
	}
	r.shownName = e.mask(wf.Name)
	r.context, r.awf = e.contextNamespaces(r.env, wf)
	if !e.NoTranscript {
		storage := e.Storage
		if storage == "" {
			storage = ".reel/storage"
		}
		rec, err := transcript.Create(transcript.Dir(storage), id, transcript.Options{
			Fsync:       e.Fsync,
			Limits:      e.Limits,
			ParentRunID: parentID,
			// no Masker: the run hands the recorder masked events (emit)
		})
		if err != nil {
			return nil, fmt.Errorf("start transcript of run %s: %w", id, err)
		}
		r.rec = rec
		if e.OnRecorder != nil {
			e.OnRecorder(rec, parentID)
		}
	}
	return r, nil
}

// execute runs the state machine and writes the run's lifecycle.
func (r *run) execute(ctx context.Context) *Report {
	ctx = r.haltable(ctx)
	r.started = time.Now()
	r.record(transcript.ExchangeEvent{Type: transcript.RunStarted,
		Payload: &transcript.StepPayload{Name: r.wf.Name, Kind: transcript.KindWorkflow, Attempt: r.attemptField(), Input: r.startInput()}},
		func(*transcript.StepPayload) {
			if r.onStart != nil {
				// After run.started, so that a reader told about the run (an
				// HTTP client that follows it) finds this attempt's start in
				// the file.
				r.onStart(r.id, r.transcriptPath())
			}
			r.audit.write(auditEntry{Event: "workflow.started", RunID: r.id, ParentRunID: r.parentID, Workflow: r.shownName, Kind: transcript.KindWorkflow})
			r.publish(plugin.Lifecycle{Type: plugin.WorkflowStarted})
			r.show(fmt.Sprintf("%s● %s", r.indent(), r.shownName))
		})

	end := r.storageEnding(r.hooked(ctx, r.walk))
	if r.past != nil {
		// A resumed run's total is what all its attempts spent.
		spent, err := r.past.spentBefore()
		if err != nil {
			r.display(fmt.Sprintf("%s! what earlier attempts spent leaves out %v", r.indent(), err))
		}
		r.addUsage(spent.Usage, spent.CostUSD)
	}

	d := r.ran + time.Since(r.started)
	rep := &Report{RunID: r.id, Status: end.status, ExitCode: end.exitCode, Duration: d, Attempt: max(r.attempt, 1), fatal: end.fatal}
	if r.replay != nil {
		rep.ReplayedFrom = r.replay.rec.RunID
	}
	if end.status != "success" {
		rep.Error = end.message
	}
	if rep.Status == "success" {
		outs, err := r.outputs()
		if err != nil {
			rep.Status, rep.ExitCode, rep.Error = "failure", 1, err.Error()
		}
		rep.Outputs = outs
	}
	r.mu.Lock()
	rep.Usage, rep.CostUSD = r.usage, r.cost
	r.mu.Unlock()
	r.record(transcript.ExchangeEvent{Type: transcript.RunCompleted,
		Payload: &transcript.StepPayload{Name: r.wf.Name, Kind: transcript.KindWorkflow, Attempt: r.attemptField(), Error: rep.Error,
			Result: transcript.RunResult{Status: rep.Status, ExitCode: rep.ExitCode, DurationMS: d.Milliseconds(), Usage: rep.Usage, CostUSD: rep.CostUSD, Outputs: rep.Outputs}}},
		func(p *transcript.StepPayload) {
			r.publishEnd(rep)
			ec := rep.ExitCode
			r.audit.write(auditEntry{Event: "workflow.completed", RunID: r.id, ParentRunID: r.parentID, Workflow: r.shownName, Kind: transcript.KindWorkflow, Status: rep.Status, DurationMS: d.Milliseconds(), ExitCode: &ec, Error: p.Error})
			line := fmt.Sprintf("%s● %s %s (%s)", r.indent(), r.shownName, rep.Status, fmtDuration(d))
			if p.Error != "" {
				line += ": " + firstLine(p.Error)
			}
			r.show(line)
		})
	if r.rec != nil {
		rep.TranscriptPath = r.rec.Path()
		if err := r.rec.Close(); err != nil && r.recErr == nil {
			r.recErr = err
		}
	}
	rep.RecordError = r.recErr
	return rep
}
