package otlp

import (
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

// span is one finished span as the mapper decided it, before the SDK
// builds it.
type span struct {
	trace  trace.TraceID
	id     trace.SpanID
	parent trace.SpanID // zero: a root span
	name   string
	kind   trace.SpanKind
	start  time.Time
	end    time.Time
	attrs  []attribute.KeyValue
	status codes.Code
	desc   string
	// runRoot marks a run's own span: a child run's gets its parent (the
	// call_workflow step of the calling run) from the caller.
	runRoot bool
}

// mapper turns one run's events, in transcript order, into spans. It is
// incremental, so the live export and the batch export run the very same
// code over the same events and so decide the same spans and ids.
type mapper struct {
	runID       string
	parentRunID string
	uuid        [16]byte
	traceID     trace.TraceID
	// link is the parent of the run's span: the call_workflow step that
	// started this run, zero for a top-level run.
	link    trace.SpanID
	content bool
	// prices price the agent steps whose provider reported no cost
	// (pricing.Default() when nil).
	prices *pricing.Table
	// spent and used add up the costs and tokens of the run's agent steps
	// and of the child runs it started, for the run's span
	// (pricing.RunTotal); ran is what the last run span stated.
	spent pricing.Total
	used  transcript.Usage
	ran   figures
	emit  func(*span)
	// onChild learns which step span started a child run.
	onChild func(childRunID string, callSpan trace.SpanID)
	// childFigures, when set, gives a child run's figures, as its own
	// run span states them, to add to this run's when its span ends (a
	// live child has finished by then).
	childFigures func(childRunID string) (figures, bool)
	kids         []string        // the child runs started, not yet added
	counted      map[string]bool // the child runs added, each once

	occ   map[occKey]uint64
	run   *step   // the open run segment
	open  []*step // open step executions in start order
	tools []*tool // open tool pairs
	last  time.Time
	// horizon is the last time anything ran in this run's subtree (its
	// child runs included), where an interrupted step ends at the
	// earliest.
	horizon time.Time
	count   int
	// seq is the last seq mapped; the live export backfills gaps.
	seq uint64
}

type occKey struct {
	path      string
	iteration int
	attempt   int
}

// step is an open step execution (or the run itself, at path "").
type step struct {
	key     stepKey
	id      trace.SpanID
	parent  trace.SpanID
	order   int
	name    string
	kind    string
	start   time.Time
	command string
	child   string                       // run a call_workflow step started
	msgs    []*transcript.MessagePayload // kept only with content
	toolN   map[string]uint64
}

// tool is an open tool.call waiting for its tool.result.
type tool struct {
	owner    *step
	id       trace.SpanID
	callID   string
	name     string
	fidelity transcript.Fidelity
	start    time.Time
	input    any
}

func newMapper(runID string, traceID trace.TraceID, content bool, emit func(*span)) (*mapper, error) {
	u, err := uuidBytes(runID)
	if err != nil {
		return nil, err
	}
	return &mapper{runID: runID, uuid: u, traceID: traceID, content: content, emit: emit, occ: map[occKey]uint64{}}, nil
}

// eventTime is the event's timestamp as the transcript file holds it
// (microseconds, UTC), so a live event and the same event read back from
// the file give the same span times.
func (m *mapper) eventTime(ev *transcript.ExchangeEvent) time.Time {
	if ev.Timestamp.IsZero() {
		return m.last
	}
	t := ev.Timestamp.UTC().Truncate(time.Microsecond)
	if t.After(m.last) {
		m.last = t
	}
	return t
}

// event maps one event. Events of other runs are the caller's mistake and
// are ignored.
func (m *mapper) event(ev *transcript.ExchangeEvent) {
	if ev.RunID != "" && ev.RunID != m.runID {
		return
	}
	if ev.Seq > m.seq {
		m.seq = ev.Seq
	}
	if ev.ParentRunID != "" {
		m.parentRunID = ev.ParentRunID
	}
	ts := m.eventTime(ev)
	sp := ev.Step()
	switch ev.Type {
	case transcript.RunStarted:
		if m.run != nil {
			// A resumed run (docs/decisions.md §11): what the interrupted attempt
			// left open ends where it stopped.
			m.closeAll(m.last, nil)
		}
		m.startRun(ts, sp)
	case transcript.RunCompleted:
		if m.run == nil {
			m.startRun(ts, sp)
		}
		m.closeAll(ts, sp)
	case transcript.StepStarted:
		if sp == nil {
			return
		}
		m.ensureRun(ts)
		m.startStep(ev, ts, sp)
	case transcript.StepCompleted:
		if sp == nil {
			return
		}
		m.ensureRun(ts)
		st := m.take(ev.Path, ev.Iteration)
		if st == nil {
			// A completion without its start: a zero-length span keeps
			// what it says.
			st = m.newStep(ev.Path, ev.Iteration, sp, ts)
		}
		m.endStep(st, ts, sp)
	case transcript.CallWorkflowStarted:
		m.ensureRun(ts)
		if ev.ChildRunID == "" {
			return
		}
		st := m.find(ev.Path, ev.Iteration)
		if st == nil {
			st = m.run
		}
		st.child = ev.ChildRunID
		if m.onChild != nil {
			m.onChild(ev.ChildRunID, st.id)
		}
		m.kids = append(m.kids, ev.ChildRunID)
	case transcript.MessageUser, transcript.MessageAssistant:
		m.ensureRun(ts)
		if p := ev.Message(); p != nil && m.content {
			st := m.owner(ev.Path, ev.Iteration)
			st.msgs = append(st.msgs, p)
		}
	case transcript.ToolCall:
		m.ensureRun(ts)
		if p := ev.Tool(); p != nil {
			m.toolCall(ev, ts, p)
		}
	case transcript.ToolResult:
		m.ensureRun(ts)
		if p := ev.Tool(); p != nil {
			m.toolResult(ev, ts, p)
		}
	}
}

// finish ends a transcript without run.completed (a killed run, or a live
// stream cut short): everything still open is interrupted.
func (m *mapper) finish() {
	if m.run != nil {
		m.closeAll(later(m.last, m.horizon), nil)
	}
}

func (m *mapper) ensureRun(ts time.Time) {
	if m.run == nil {
		m.startRun(ts, nil)
	}
}

func (m *mapper) startRun(ts time.Time, sp *transcript.StepPayload) {
	st := &step{kind: transcript.KindWorkflow, start: ts}
	attempt := 0
	if sp != nil {
		st.name = sp.Name
		attempt = sp.Attempt
	}
	st.key = m.key("", 0, attempt)
	st.id = stepSpanID(st.key)
	st.parent = m.link
	m.run = st
}

func (m *mapper) key(path string, iteration, attempt int) stepKey {
	k := occKey{path, iteration, attempt}
	n := m.occ[k]
	m.occ[k] = n + 1
	return stepKey{run: m.uuid, path: path, iteration: iteration, attempt: attempt, occurrence: n}
}

func (m *mapper) newStep(path string, iteration int, sp *transcript.StepPayload, ts time.Time) *step {
	m.count++
	st := &step{name: sp.Name, kind: sp.Kind, start: ts, order: m.count, command: sp.Command}
	st.key = m.key(path, iteration, sp.Attempt)
	st.id = stepSpanID(st.key)
	st.parent = m.parentFor(path)
	return st
}

func (m *mapper) startStep(ev *transcript.ExchangeEvent, ts time.Time, sp *transcript.StepPayload) {
	m.open = append(m.open, m.newStep(ev.Path, ev.Iteration, sp, ts))
}

// isAncestor reports whether a is a proper ancestor path of p ("" is the
// ancestor of every step).
func isAncestor(a, p string) bool {
	return a == "" || len(p) > len(a) && p[len(a)] == '.' && strings.HasPrefix(p, a)
}

// parentFor is the span a step at path p hangs under: the open step with
// the longest ancestor path, the latest started among equals, else the
// run (the rule package exectree rebuilds `reel tree` with).
func (m *mapper) parentFor(p string) trace.SpanID {
	var best *step
	for _, st := range m.open {
		if !isAncestor(st.key.path, p) {
			continue
		}
		if best == nil || len(st.key.path) > len(best.key.path) || len(st.key.path) == len(best.key.path) && st.order > best.order {
			best = st
		}
	}
	if best == nil {
		return m.run.id
	}
	return best.id
}

// find returns the latest open execution at path p, preferring one of the
// same iteration.
func (m *mapper) find(p string, iteration int) *step {
	if k := m.closes(p, iteration); k >= 0 {
		return m.open[k]
	}
	return nil
}

// closes is the index in m.open of the execution a step.completed at p
// and iteration closes, -1 for none.
func (m *mapper) closes(p string, iteration int) int {
	return runstatus.Closes(m.open, p, iteration, func(st *step) (string, int) { return st.key.path, st.key.iteration })
}

// take removes and returns the execution a step.completed closes.
func (m *mapper) take(p string, iteration int) *step {
	k := m.closes(p, iteration)
	if k < 0 {
		return nil
	}
	st := m.open[k]
	m.open = append(m.open[:k], m.open[k+1:]...)
	return st
}

// owner is the execution exchange events at p belong to: the step at that
// path, else its closest open ancestor, else the run.
func (m *mapper) owner(p string, iteration int) *step {
	if st := m.find(p, iteration); st != nil {
		return st
	}
	var best *step
	for _, st := range m.open {
		if isAncestor(st.key.path, p) && (best == nil || len(st.key.path) >= len(best.key.path)) {
			best = st
		}
	}
	if best == nil {
		return m.run
	}
	return best
}

func (m *mapper) toolCall(ev *transcript.ExchangeEvent, ts time.Time, p *transcript.ToolPayload) {
	owner := m.owner(ev.Path, ev.Iteration)
	m.tools = append(m.tools, m.newTool(owner, ts, p))
}

func (m *mapper) newTool(owner *step, ts time.Time, p *transcript.ToolPayload) *tool {
	if owner.toolN == nil {
		owner.toolN = map[string]uint64{}
	}
	n := owner.toolN[p.CallID]
	owner.toolN[p.CallID] = n + 1
	return &tool{
		owner: owner, id: toolSpanID(owner.key, p.CallID, n), callID: p.CallID, name: p.Name,
		fidelity: p.Fidelity, start: ts, input: p.Input,
	}
}

func (m *mapper) toolResult(ev *transcript.ExchangeEvent, ts time.Time, p *transcript.ToolPayload) {
	owner := m.owner(ev.Path, ev.Iteration)
	// The call's own step first; any open call with the id after that, in
	// case the steps open around it changed in between.
	for _, sameOwner := range []bool{true, false} {
		for k, t := range m.tools {
			if t.callID == p.CallID && (t.owner == owner || !sameOwner) {
				m.tools = append(m.tools[:k], m.tools[k+1:]...)
				m.endTool(t, ts, p)
				return
			}
		}
	}
	// A result without its call (an imported stream that only kept
	// results): a zero-length span still shows the invocation.
	t := m.newTool(owner, ts, p)
	if t.name == "" {
		t.name = p.Name
	}
	m.endTool(t, ts, p)
}

// closeTools ends the open tool pairs of owner (all when owner is nil)
// that never got a result.
func (m *mapper) closeTools(owner *step, ts time.Time, reason string) {
	kept := m.tools[:0]
	for _, t := range m.tools {
		if owner != nil && t.owner != owner {
			kept = append(kept, t)
			continue
		}
		m.endTool(t, ts, &transcript.ToolPayload{Name: t.name, CallID: t.callID, Fidelity: t.fidelity, Error: reason})
	}
	clear(m.tools[len(kept):])
	m.tools = kept
}

// closeAll ends the run segment: open tools and steps are interrupted at
// ts, then the run's span ends with what run.completed says (sp, nil when
// there is no run.completed).
func (m *mapper) closeAll(ts time.Time, sp *transcript.StepPayload) {
	m.closeTools(nil, ts, "no result: the run ended first")
	for k := len(m.open) - 1; k >= 0; k-- {
		m.endStep(m.open[k], ts, nil)
	}
	clear(m.open)
	m.open = m.open[:0]
	m.endRun(ts, sp)
	m.run = nil
}
