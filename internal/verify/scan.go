package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
)

// stepKey names one execution of a step: its path and loop iteration.
type stepKey struct {
	path      string
	iteration int
}

// scanner is one pass over one transcript: each event goes through the
// envelope, lifecycle, payload and pairing checks in turn, and what the
// pass learns about the file lands in st.
type scanner struct {
	st      *fileState
	pl      *problemList
	nameID  string // the run id the file name gives, when it is <id>.jsonl
	isJSONL bool

	expectSeq    uint64
	lastLine     int
	sawStarted   bool
	sawCompleted bool
	attempt      int
	// tracking turns false once more than maxTracked things are open to
	// pair; the pairing checks stop there.
	tracking bool
	span     span
}

// span is what one attempt left open. Balance is checked per attempt:
// steps an interrupted attempt left open stay so, and the attempt that
// resumes it starts afresh.
type span struct {
	openSteps map[stepKey]int
	openCalls map[stepKey]int
	toolCalls map[string]int // call_id -> line of tool.call
	toolDone  map[string]bool
	children  map[string]bool
	proxied   proxyCheck
}

func (s *span) reset() {
	s.openSteps, s.openCalls = map[stepKey]int{}, map[stepKey]int{}
	s.toolCalls, s.toolDone = map[string]int{}, map[string]bool{}
	s.children = map[string]bool{}
	s.proxied.reset()
}

func (s *span) size() int {
	return len(s.openSteps) + len(s.openCalls) + len(s.toolCalls) + len(s.toolDone) + len(s.children)
}

func (c *checker) scan(run *runs.Run) (*fileState, []Problem, error) {
	path := run.Path
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	s := &scanner{
		st:        &fileState{path: path, children: map[string]int{}},
		pl:        &problemList{path: path},
		expectSeq: 1,
		attempt:   1,
		tracking:  true,
	}
	s.span.reset()
	s.file(info, c.opts.SkipMode)
	for rec, err := range run.Events(runs.FullDecode) {
		if rec == nil {
			if errors.Is(err, transcript.ErrEmpty) {
				break
			}
			return nil, nil, err
		}
		ev, line := rec.Event(), rec.Line
		if err != nil {
			keep, stop, err := s.damage(ev, line, err)
			if err != nil {
				return nil, nil, err
			}
			if stop {
				return s.st, s.pl.done(), nil
			}
			if !keep {
				continue
			}
		}
		s.event(ev, line)
	}
	s.finish()
	return s.st, s.pl.done(), nil
}

// file checks what the file itself says: its mode and its name.
func (s *scanner) file(info os.FileInfo, skipMode bool) {
	if !skipMode && info.Mode().Perm() != 0o600 {
		s.pl.add(0, "mode is %04o, want 0600", info.Mode().Perm())
	}
	s.nameID, s.isJSONL = strings.CutSuffix(filepath.Base(s.st.path), ".jsonl")
	if !s.isJSONL {
		s.pl.add(0, "file name is not <run-id>.jsonl")
	} else if err := transcript.ValidRunID(s.nameID); err != nil {
		s.pl.add(0, "file name: %v", err)
	}
}

// damage reports a line the reader could not take as it is. keep says
// whether the event it still decoded goes through the checks; stop, that
// the file is past what the reader reads; err, that the read itself
// failed.
func (s *scanner) damage(ev *transcript.ExchangeEvent, line int, err error) (keep, stop bool, _ error) {
	var le *transcript.LineError
	if !errors.As(err, &le) {
		return false, false, err
	}
	switch {
	case errors.Is(err, transcript.ErrUnknownEventType), errors.Is(err, transcript.ErrUnknownBlockType):
		s.pl.add(line, "%v (writers must use the closed vocabulary)", le.Err)
	case errors.Is(err, transcript.ErrTornLine):
		s.pl.add(line, "%v", le.Err)
		return false, false, nil
	case errors.Is(err, transcript.ErrFileTooLarge):
		s.pl.add(line, "%v", le.Err)
		return false, true, nil
	default:
		s.pl.add(line, "%v", le.Err)
		return ev.Type != "", false, nil
	}
	return true, false, nil
}

// event runs every check on one decoded event.
func (s *scanner) event(ev *transcript.ExchangeEvent, line int) {
	s.st.events++
	s.envelope(ev, line)
	s.lifecycle(ev, line)
	s.lastLine = line
	payload(ev, line, s.pl.add)
	if !s.track(line) {
		return
	}
	s.span.proxied.event(ev, line, s.pl.add)
	s.pair(ev, line)
}

// envelope checks the fields every event carries against the file's first
// event and the schema.
func (s *scanner) envelope(ev *transcript.ExchangeEvent, line int) {
	add, st := s.pl.add, s.st
	if ev.Seq != s.expectSeq {
		add(line, "seq %d, want %d (seq must be 1..N in file order)", ev.Seq, s.expectSeq)
	}
	s.expectSeq = ev.Seq + 1
	if st.runID == "" {
		st.runID = ev.RunID
		st.parentRunID = ev.ParentRunID
		if err := transcript.ValidRunID(ev.RunID); err != nil {
			add(line, "run_id: %v", err)
		}
		if s.isJSONL && ev.RunID != s.nameID {
			add(line, "run_id %s does not match the file name", ev.RunID)
		}
	} else if ev.RunID != st.runID {
		add(line, "run_id %s differs from the first event's %s", ev.RunID, st.runID)
	}
	if ev.ParentRunID != st.parentRunID {
		add(line, "parent_run_id %q differs from the first event's %q", ev.ParentRunID, st.parentRunID)
	}
	if ev.Timestamp.IsZero() {
		add(line, "timestamp missing")
	}
	if (ev.Type == transcript.RunStarted || ev.Type == transcript.RunCompleted) && ev.Path != "" {
		add(line, "%s has path %q, want empty", ev.Type, ev.Path)
	}
	if ev.Iteration < 0 {
		add(line, "negative iteration %d", ev.Iteration)
	}
	if ev.ChildRunID != "" && ev.Type != transcript.CallWorkflowStarted && ev.Type != transcript.CallWorkflowCompleted {
		add(line, "child_run_id on a %s event", ev.Type)
	}
}

// lifecycle checks the order of run.started and run.completed. A resumed
// run's file holds one span per attempt, each opened by a run.started
// whose attempt counts them (docs/decisions.md §11); only a run.started
// may follow a run.completed.
func (s *scanner) lifecycle(ev *transcript.ExchangeEvent, line int) {
	add := s.pl.add
	if s.st.events == 1 && ev.Type != transcript.RunStarted {
		add(line, "first event is %s, want run.started", ev.Type)
	}
	if ev.Type == transcript.RunStarted {
		if s.sawStarted {
			s.attempt++
			if p := ev.Step(); p == nil || p.Attempt != s.attempt {
				add(line, "run.started again without attempt %d (a resume must number its attempt)", s.attempt)
			}
			if s.sawCompleted {
				s.closeSpan()
			}
			s.span.reset()
		} else if p := ev.Step(); p != nil && p.Attempt > 1 {
			add(line, "first run.started has attempt %d", p.Attempt)
		}
		s.sawStarted, s.sawCompleted = true, false
	}
	if s.sawCompleted && ev.Type != transcript.RunStarted {
		add(line, "%s after run.completed", ev.Type)
	}
	if ev.Type == transcript.RunCompleted {
		s.sawCompleted = true
		if p := ev.Step(); p != nil && p.Attempt > 1 && p.Attempt != s.attempt {
			add(line, "run.completed of attempt %d closes attempt %d", p.Attempt, s.attempt)
		}
	}
}

// track reports whether the pairing checks still run: they stop, once and
// saying so, when more than maxTracked things are open to pair.
func (s *scanner) track(line int) bool {
	if s.tracking && s.span.size()+len(s.st.children) >= maxTracked {
		s.tracking = false
		s.pl.list = append(s.pl.list, Problem{File: s.st.path, Line: line, Warning: true,
			Message: fmt.Sprintf("more than %d steps, tool calls or child runs to pair: the pairing checks stop here", maxTracked)})
	}
	return s.tracking
}

// pair checks that starts and completions, calls and results pair up.
func (s *scanner) pair(ev *transcript.ExchangeEvent, line int) {
	key := stepKey{ev.Path, ev.Iteration}
	switch ev.Type {
	case transcript.StepStarted:
		s.span.openSteps[key]++
	case transcript.StepCompleted:
		if s.span.openSteps[key] == 0 {
			s.pl.add(line, "step.completed for %s (iteration %d) without a step.started", ev.Path, ev.Iteration)
		} else {
			s.span.openSteps[key]--
		}
	case transcript.CallWorkflowStarted:
		s.span.openCalls[key]++
		s.childStarted(ev, line)
	case transcript.CallWorkflowCompleted:
		if s.span.openCalls[key] == 0 {
			s.pl.add(line, "step.call_workflow.completed for %s without a start", ev.Path)
		} else {
			s.span.openCalls[key]--
		}
		if ev.ChildRunID != "" {
			if _, ok := s.st.children[ev.ChildRunID]; !ok {
				s.pl.add(line, "step.call_workflow.completed names child_run_id %s that was never started", ev.ChildRunID)
			}
		}
	case transcript.ToolCall, transcript.ToolResult:
		if p := ev.Tool(); p != nil && p.CallID != "" {
			s.tool(ev.Type, p.CallID, line)
		}
	}
}

// childStarted checks and records the child run a
// step.call_workflow.started names.
func (s *scanner) childStarted(ev *transcript.ExchangeEvent, line int) {
	id := ev.ChildRunID
	if id == "" {
		s.pl.add(line, "step.call_workflow.started without child_run_id")
		return
	}
	if err := transcript.ValidRunID(id); err != nil {
		s.pl.add(line, "child_run_id: %v", err)
	}
	if s.span.children[id] {
		s.pl.add(line, "child_run_id %s started twice", id)
	}
	s.span.children[id] = true
	if _, seen := s.st.children[id]; !seen {
		s.st.children[id] = line
	}
}

// tool pairs a tool.call or tool.result by its call id.
func (s *scanner) tool(typ transcript.EventType, id string, line int) {
	sp := &s.span
	if typ == transcript.ToolCall {
		if _, dup := sp.toolCalls[id]; dup {
			s.pl.add(line, "tool.call %s appears twice", id)
		}
		sp.toolCalls[id] = line
		return
	}
	if _, ok := sp.toolCalls[id]; !ok {
		s.pl.add(line, "tool.result %s without a preceding tool.call", id)
	}
	if sp.toolDone[id] {
		s.pl.add(line, "tool.result %s appears twice", id)
	}
	sp.toolDone[id] = true
}

// closeSpan checks that a completed attempt closed everything it opened.
func (s *scanner) closeSpan() {
	if !s.tracking {
		return
	}
	sp, add := &s.span, s.pl.add
	for _, k := range sortedKeys(sp.openSteps) {
		add(0, "step %s (iteration %d) started %d more time(s) than it completed", k.path, k.iteration, sp.openSteps[k])
	}
	for _, k := range sortedKeys(sp.openCalls) {
		add(0, "call_workflow %s (iteration %d) has no step.call_workflow.completed", k.path, k.iteration)
	}
	var dangling []string
	for id := range sp.toolCalls {
		if !sp.toolDone[id] {
			dangling = append(dangling, id)
		}
	}
	sort.Strings(dangling)
	for _, id := range dangling {
		add(sp.toolCalls[id], "tool.call %s has no tool.result", id)
	}
}

// finish says how the file ended: empty, interrupted, or completed with
// everything closed.
func (s *scanner) finish() {
	st := s.st
	if st.events == 0 {
		s.pl.list = append(s.pl.list, Problem{File: st.path, Warning: true,
			Message: "no events: the run was stopped before it wrote its first one"})
		return
	}
	st.completed = s.sawCompleted
	if !st.completed {
		s.pl.list = append(s.pl.list, Problem{File: st.path, Line: s.lastLine, Warning: true,
			Message: "interrupted: no run.completed (the run was killed or is still running)"})
		return
	}
	s.closeSpan()
}

// problemList lists one file's problems, perKind of each kind (each
// format) and a count of the rest, so a file of a million bad lines gives
// a short report in bounded memory.
type problemList struct {
	path  string
	list  []Problem
	count map[string]int
	first map[string]string
	order []string
}

func (pl *problemList) add(line int, format string, args ...any) {
	if pl.count == nil {
		pl.count, pl.first = map[string]int{}, map[string]string{}
	}
	n := pl.count[format]
	pl.count[format] = n + 1
	if n >= perKind {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if n == 0 {
		pl.order = append(pl.order, format)
		pl.first[format] = msg
	}
	pl.list = append(pl.list, Problem{File: pl.path, Line: line, Message: msg})
}

// done returns the problems with a count for each kind listed only in
// part.
func (pl *problemList) done() []Problem {
	for _, f := range pl.order {
		if n := pl.count[f]; n > perKind {
			pl.list = append(pl.list, Problem{File: pl.path,
				Message: fmt.Sprintf("… and %d more problems like this one: %s", n-perKind, pl.first[f])})
		}
	}
	return pl.list
}

func sortedKeys(m map[stepKey]int) []stepKey {
	var keys []stepKey
	for k, n := range m {
		if n > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].path != keys[j].path {
			return keys[i].path < keys[j].path
		}
		return keys[i].iteration < keys[j].iteration
	})
	return keys
}

// payload checks that the payload has the shape its event type requires.
func payload(ev *transcript.ExchangeEvent, line int, add func(int, string, ...any)) {
	if !ev.Type.Known() {
		return
	}
	switch ev.Type {
	case transcript.RunStarted, transcript.RunCompleted:
		if ev.Payload == nil {
			return
		}
		fallthrough
	case transcript.StepStarted, transcript.StepCompleted, transcript.CallWorkflowStarted, transcript.CallWorkflowCompleted:
		p := ev.Step()
		if p == nil {
			add(line, "%s payload is not a step payload (needs name and kind)", ev.Type)
			return
		}
		if p.Name == "" && ev.Type != transcript.RunStarted && ev.Type != transcript.RunCompleted {
			add(line, "%s payload has no name", ev.Type)
		}
		if p.Kind == "" {
			add(line, "%s payload has no kind", ev.Type)
		}
		if p.Attempt < 0 {
			add(line, "negative attempt %d", p.Attempt)
		}
	case transcript.MessageUser, transcript.MessageAssistant:
		p := ev.Message()
		if p == nil {
			add(line, "%s payload is not a message payload (needs role and blocks)", ev.Type)
			return
		}
		want := "user"
		if ev.Type == transcript.MessageAssistant {
			want = "assistant"
		}
		if p.Role != want {
			add(line, "%s has role %q, want %q", ev.Type, p.Role, want)
		}
		for i, b := range p.Blocks {
			if !b.Fidelity.Known() {
				add(line, "block %d has fidelity %q, want router or agent_emitted", i, b.Fidelity)
			}
			if b.Type == transcript.BlockToolUse && b.ToolID == "" {
				add(line, "block %d: tool_use without tool_id", i)
			}
		}
	case transcript.ToolCall, transcript.ToolResult:
		p := ev.Tool()
		if p == nil {
			add(line, "%s payload is not a tool payload (needs call_id)", ev.Type)
			return
		}
		if p.CallID == "" {
			add(line, "%s has an empty call_id", ev.Type)
		}
		if p.Name == "" {
			add(line, "%s has no tool name", ev.Type)
		}
		if !p.Fidelity.Known() {
			add(line, "%s has fidelity %q, want router or agent_emitted", ev.Type, p.Fidelity)
		}
	}
}
