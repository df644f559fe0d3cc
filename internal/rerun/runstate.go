// Package rerun rebuilds, from a run's transcript, what it takes to
// continue the run (reel resume) or to repeat it without calling providers
// (reel run --replay-from): the inputs and workflow it was started with,
// every step execution with its recorded result, and the exchange events of
// its agent steps.
//
// A transcript may hold several attempts of one run: the run that was
// interrupted, failed or cancelled, then each resume, each opened by its own
// run.started (payload attempt 2, 3, …) and appended to the same file
// (docs/decisions.md §11). A resumed attempt does not write the steps it kept
// again; its run.started names them instead (RunInput.Reused, by ordinal).
// Load merges the attempts into the executions the run now stands on: those
// each attempt kept from the ones before, then its own.
package rerun

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// Run is a run as its transcript records it.
type Run struct {
	Path        string
	RunID       string
	ParentRunID string
	// Workflow is the workflow's name.
	Workflow string
	// Status is the last attempt's status (package runstatus); Error and
	// Result come from its run.completed, when it has one.
	Status string
	Error  string
	Result transcript.RunResult
	// Spans are the attempts, in file order.
	Spans []*Span
	// Executions are the step executions the run stands on, in file
	// order: every execution of the last attempt, and those of earlier
	// attempts that the later ones kept.
	Executions []*Execution
	// All are the step executions of every attempt, in file order: those
	// the run stands on and those a retry or a resume ran again, which
	// spent what they spent all the same (Spent).
	All []*Execution
	// Warnings name lines that could not be read, repeated ones
	// summarised (package warn); what could is here.
	Warnings []string
}

// Span is one attempt: run.started to run.completed, or to the end of the
// file when the attempt was interrupted.
type Span struct {
	Attempt   int
	Input     transcript.RunInput
	Started   time.Time
	Ended     time.Time // run.completed's time, else the last event's
	Completed bool
	Status    string
	Error     string
	Result    transcript.RunResult
}

// Duration is how long the attempt ran.
func (s *Span) Duration() time.Duration {
	if s.Ended.After(s.Started) {
		return s.Ended.Sub(s.Started)
	}
	return 0
}

// Execution is one step execution: one step.started and, unless it was cut
// short, its step.completed.
type Execution struct {
	// Ordinal is the 1-based position of its step.started among all the
	// step.started events of the file.
	Ordinal   int
	Span      int // index into Run.Spans
	Path      string
	Iteration int
	Attempt   int
	Name      string
	Kind      string
	Command   string
	Started   time.Time
	Ended     time.Time
	// Completed is set when its step.completed was read; Error and Result
	// are that event's.
	Completed bool
	Error     string
	Result    json.RawMessage
	// Passed is set when the attempt started another step after this one
	// completed: the run went on past it (a failure handled by
	// continue_on_error, on_failure, a transition or a retry).
	Passed bool
	// ChildRunID is the run a call_workflow step started; ChildResult is
	// what its step.call_workflow.completed reported.
	ChildRunID  string
	ChildResult *transcript.RunResult
	// Exchange holds the message.* and tool.* events written under the
	// step while it ran (Options.Exchange).
	Exchange []transcript.ExchangeEvent
}

// Succeeded reports whether the execution completed without error.
func (e *Execution) Succeeded() bool { return e.Completed && e.Error == "" }

// Reusable reports whether a later attempt may take the execution's result
// instead of running the step again: it completed, and either succeeded or
// the run went on past its failure.
func (e *Execution) Reusable() bool { return e.Completed && (e.Error == "" || e.Passed) }

// Cancelled reports whether the execution was cut short by a cancel (its
// error says so, as the engine writes it).
func (e *Execution) Cancelled() bool {
	return e.Completed && runstatus.StepError(e.Error) == runstatus.Cancelled
}

// Prompt returns the prompt and system prompt of an agent execution's first
// message.user (Options.Exchange), and whether there was one.
func (e *Execution) Prompt() (prompt, system string, ok bool) {
	for i := range e.Exchange {
		ev := &e.Exchange[i]
		if ev.Type != transcript.MessageUser {
			continue
		}
		m := ev.Message()
		if m == nil || len(m.Blocks) == 0 {
			return "", "", true
		}
		prompt = m.Blocks[0].Text
		if len(m.Blocks) > 1 {
			system = m.Blocks[1].Text
		}
		return prompt, system, true
	}
	return "", "", false
}

// Key is where an execution ran: its path and innermost loop index.
type Key struct {
	Path      string
	Iteration int
}

// Key returns the execution's key.
func (e *Execution) Key() Key { return Key{e.Path, e.Iteration} }

// Options tune Load.
type Options struct {
	Limits transcript.Limits
	// Exchange keeps the message and tool events of each execution.
	Exchange bool
}

// Load reads the transcript at path.
func Load(path string, opts Options) (*Run, error) {
	return read(runs.Open(path, runs.Options{Limits: opts.Limits}), opts)
}

// LoadChild reads the transcript of the child run id that a call_workflow
// step of the run at parentPath started.
func LoadChild(parentPath, id string, opts Options) (*Run, error) {
	c, err := runs.Open(parentPath, runs.Options{Limits: opts.Limits}).Child(id)
	if err != nil {
		return nil, err
	}
	return read(c, opts)
}

func read(src *runs.Run, opts Options) (*Run, error) {
	b := &builder{run: &Run{Path: src.Path}, opts: opts, src: src}
	for rec, err := range src.Events(runs.FullDecode) {
		if errors.Is(err, transcript.ErrEmpty) {
			break // no run.started: finish says so
		}
		if err != nil {
			return nil, err
		}
		b.event(rec.Event())
	}
	return b.finish()
}

type builder struct {
	src     *runs.Run
	run     *Run
	opts    Options
	span    *Span
	ordinal int
	all     []*Execution // every execution, file order
	kept    []*Execution // the executions earlier attempts kept
	own     []*Execution // the current attempt's
	open    []*Execution
	done    []*Execution // completed since the last step.started
}

// endHook reports whether a step at path named name is one of the
// workflow hooks that run as a run ends (docs/decisions.md §11: at top level, under
// the hook's name).
func endHook(path, name string) bool {
	if path != name {
		return false
	}
	switch path {
	case workflow.HookWorkflowEnd, workflow.HookWorkflowError, workflow.HookWorkflowCancel:
		return true
	}
	return false
}

func (b *builder) event(ev *transcript.ExchangeEvent) {
	if b.run.RunID == "" {
		b.run.RunID, b.run.ParentRunID = ev.RunID, ev.ParentRunID
	}
	if b.span != nil && !b.span.Completed {
		b.span.Ended = ev.Timestamp
	}
	sp := ev.Step()
	switch ev.Type {
	case transcript.RunStarted:
		b.startSpan(ev, sp)
	case transcript.RunCompleted:
		if b.span == nil {
			b.startSpan(ev, nil)
		}
		b.span.Completed = true
		b.span.Ended = ev.Timestamp
		b.span.Status, b.span.Result = runstatus.Completed(sp)
		if sp != nil {
			b.span.Error = sp.Error
			if b.run.Workflow == "" {
				b.run.Workflow = sp.Name
			}
		}
		b.open = nil
	case transcript.StepStarted:
		if sp == nil {
			return
		}
		if b.span == nil {
			b.startSpan(ev, nil)
		}
		b.ordinal++
		// A start after a completion means the attempt went on past it;
		// the workflow_end, workflow_error or workflow_cancel hook does
		// not: it runs because the run is ending.
		if !endHook(ev.Path, sp.Name) {
			for _, e := range b.done {
				e.Passed = true
			}
			b.done = b.done[:0]
		}
		e := &Execution{
			Ordinal: b.ordinal, Span: len(b.run.Spans) - 1, Path: ev.Path, Iteration: ev.Iteration,
			Attempt: sp.Attempt, Name: sp.Name, Kind: sp.Kind, Command: sp.Command, Started: ev.Timestamp,
		}
		b.all = append(b.all, e)
		b.own = append(b.own, e)
		b.open = append(b.open, e)
	case transcript.StepCompleted:
		if sp == nil {
			return
		}
		e := b.take(ev.Path, ev.Iteration)
		if e == nil {
			b.src.Warnings().Addf("%s: seq %d: step.completed for %s with no open step.started", b.run.Path, ev.Seq, ev.Path)
			return
		}
		e.Completed, e.Ended, e.Error = true, ev.Timestamp, sp.Error
		b.done = append(b.done, e)
		if raw, ok := sp.Result.(json.RawMessage); ok {
			e.Result = raw
		}
	case transcript.CallWorkflowStarted:
		if e := b.find(ev.Path, ev.Iteration); e != nil {
			e.ChildRunID = ev.ChildRunID
		}
	case transcript.CallWorkflowCompleted:
		if e := b.find(ev.Path, ev.Iteration); e != nil && sp != nil {
			var rr transcript.RunResult
			if transcript.DecodeResult(sp.Result, &rr) == nil {
				e.ChildResult = &rr
			}
		}
	default:
		if b.opts.Exchange {
			if e := b.find(ev.Path, ev.Iteration); e != nil {
				e.Exchange = append(e.Exchange, *ev)
			}
		}
	}
}

func (b *builder) startSpan(ev *transcript.ExchangeEvent, sp *transcript.StepPayload) {
	s := &Span{Attempt: len(b.run.Spans) + 1, Started: ev.Timestamp, Ended: ev.Timestamp, Status: runstatus.Interrupted}
	if sp != nil {
		if sp.Attempt > 0 {
			s.Attempt = sp.Attempt
		}
		if sp.Input != nil {
			if err := transcript.DecodeResult(sp.Input, &s.Input); err != nil {
				b.src.Warnings().Addf("%s: seq %d: run.started input: %v", b.run.Path, ev.Seq, err)
			}
		}
		if b.run.Workflow == "" {
			b.run.Workflow = sp.Name
		}
	}
	if len(b.run.Spans) > 0 {
		// What the earlier attempts leave to this one: what they kept and
		// did, narrowed to what this attempt names as reused.
		prev := append(b.kept, b.own...)
		b.kept = b.kept[:0:0]
		for _, e := range prev {
			if sp == nil || sp.Input == nil || InRanges(s.Input.Reused, e.Ordinal) {
				if e.Reusable() {
					b.kept = append(b.kept, e)
				}
			}
		}
	}
	b.own, b.open, b.done = nil, nil, nil
	b.span = s
	b.run.Spans = append(b.run.Spans, s)
}

// find returns the latest open execution at path p, preferring one of the
// same iteration.
func (b *builder) find(p string, iteration int) *Execution {
	if k := b.closes(p, iteration); k >= 0 {
		return b.open[k]
	}
	return nil
}

// closes is the index in b.open of the execution a step.completed at p
// and iteration closes, -1 for none.
func (b *builder) closes(p string, iteration int) int {
	return runstatus.Closes(b.open, p, iteration, func(e *Execution) (string, int) { return e.Path, e.Iteration })
}

func (b *builder) take(p string, iteration int) *Execution {
	k := b.closes(p, iteration)
	if k < 0 {
		return nil
	}
	e := b.open[k]
	b.open = append(b.open[:k], b.open[k+1:]...)
	return e
}

func (b *builder) finish() (*Run, error) {
	r := b.run
	if len(r.Spans) == 0 {
		return nil, fmt.Errorf("transcript %s: no run.started: nothing was recorded", r.Path)
	}
	last := r.Spans[len(r.Spans)-1]
	if last.Completed {
		r.Status, r.Error, r.Result = last.Status, last.Error, last.Result
	} else {
		r.Status = b.src.Status()
	}
	r.Warnings = b.src.Warnings().Strings()
	r.All = b.all
	r.Executions = append(append([]*Execution{}, b.kept...), b.own...)
	sort.SliceStable(r.Executions, func(i, j int) bool { return r.Executions[i].Ordinal < r.Executions[j].Ordinal })
	return r, nil
}

// Attempts is the number of attempts the file holds.
func (r *Run) Attempts() int { return r.Spans[len(r.Spans)-1].Attempt }

// Input is what the last attempt was started with.
func (r *Run) Input() transcript.RunInput { return r.Spans[len(r.Spans)-1].Input }

// Ran is how long the attempts ran together.
func (r *Run) Ran() time.Duration {
	var d time.Duration
	for _, s := range r.Spans {
		d += s.Duration()
	}
	return d
}

// Span returns the attempt an execution belongs to.
func (r *Run) Span(e *Execution) *Span { return r.Spans[e.Span] }

// Visit is one pass of the flow through a state: its retry attempts, in
// order (one execution for a state without retries).
type Visit struct {
	Executions []*Execution
}

// Last is the visit's final attempt.
func (v *Visit) Last() *Execution { return v.Executions[len(v.Executions)-1] }

// Visits groups the executions by key into visits, in file order. The
// attempts of one visit are numbered 1, 2, …; a new visit starts when the
// numbering does.
func (r *Run) Visits() map[Key][]*Visit { return Group(r.Executions) }

// Group groups executions, in file order, by key into visits.
func Group(execs []*Execution) map[Key][]*Visit {
	out := map[Key][]*Visit{}
	for _, e := range execs {
		k := e.Key()
		vs := out[k]
		if n := len(vs); n > 0 && e.Attempt > 1 && vs[n-1].Last().Attempt == e.Attempt-1 {
			vs[n-1].Executions = append(vs[n-1].Executions, e)
			continue
		}
		out[k] = append(vs, &Visit{Executions: []*Execution{e}})
	}
	return out
}

// Ranges compresses sorted ordinals into inclusive ranges.
func Ranges(ordinals []int) [][2]int {
	var out [][2]int
	for _, o := range ordinals {
		if n := len(out); n > 0 && out[n-1][1]+1 == o {
			out[n-1][1] = o
			continue
		}
		out = append(out, [2]int{o, o})
	}
	return out
}

// InRanges reports whether ordinal lies in one of the inclusive ranges.
func InRanges(ranges [][2]int, ordinal int) bool { return runstatus.InRanges(ranges, ordinal) }
