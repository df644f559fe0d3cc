package normalize

import (
	"fmt"
	"strings"
	"time"

	"github.com/reelhq/reel/transcript"
)

// state assembles canonical events; every format feeds it.
type state struct {
	emit Emit
	err  error

	blocks []transcript.ContentBlock
	msgTS  time.Time

	tools map[string]*toolState
	order []string
	anon  int

	// holding is set while a held call (heldCall) waits for its output:
	// events wait in held, in the order they were made, and waiting maps
	// each held call's id to its tool.call in held. Both are kept for the
	// next call once released.
	holding bool
	held    []transcript.ExchangeEvent
	waiting map[string]int

	res       Result
	lastText  string
	finalText string
	skipped   map[string]int
	usage     transcript.Usage
}

type toolState struct {
	name     string
	resulted bool
}

func newState(emit Emit) *state {
	return &state{emit: emit, tools: make(map[string]*toolState)}
}

func (s *state) send(t transcript.EventType, ts time.Time, payload any) {
	ev := transcript.ExchangeEvent{Type: t, Timestamp: ts, Payload: payload}
	if s.holding && len(s.held) < maxHeld {
		s.held = append(s.held, ev)
		return
	}
	s.release()
	s.put(ev)
}

// maxHeld bounds the events a held call keeps waiting. A Codex call and its
// output are written a line or two apart; a recording whose call's output
// does not come within this many events lets them go, the call with its
// own time, rather than hold the rest of a large file in memory.
const maxHeld = 64

func (s *state) put(ev transcript.ExchangeEvent) {
	if s.err != nil {
		return
	}
	if err := s.emit(ev); err != nil {
		s.err = fmt.Errorf("normalize: emit %s: %w", ev.Type, err)
	}
}

func (s *state) skip(reason string) {
	if s.skipped == nil {
		s.skipped = make(map[string]int)
	}
	s.skipped[reason]++
}

func (s *state) warn(msg string) { s.res.Warnings = append(s.res.Warnings, msg) }

func (s *state) fail(msg string) {
	s.res.IsError = true
	if msg == "" {
		msg = "provider reported an error"
	}
	if s.res.Error == "" {
		s.res.Error = msg
	} else if !strings.Contains(s.res.Error, msg) {
		s.res.Error += "; " + msg
	}
}

func (s *state) add(b transcript.ContentBlock, ts time.Time) {
	if len(s.blocks) == 0 {
		s.msgTS = ts
	}
	b.Fidelity = transcript.FidelityAgentEmitted
	s.blocks = append(s.blocks, b)
}

func (s *state) text(t string, ts time.Time) {
	if t == "" {
		return
	}
	s.add(transcript.ContentBlock{Type: transcript.BlockText, Text: t}, ts)
}

func (s *state) thinking(t string, ts time.Time) {
	s.add(transcript.ContentBlock{Type: transcript.BlockThinking, Thinking: t}, ts)
}

func (s *state) command(c string, ts time.Time) {
	s.add(transcript.ContentBlock{Type: transcript.BlockCommand, Command: c}, ts)
}

// toolUse records a tool_use block and its tool.call.
func (s *state) toolUse(id, name string, input any, ts time.Time) string {
	if id != "" {
		if _, dup := s.tools[id]; dup {
			return id
		}
	}
	id = s.call(id, name, input, ts)
	s.add(transcript.ContentBlock{Type: transcript.BlockToolUse, ToolID: id, ToolName: name, ToolInput: input}, ts)
	return id
}

// call emits a tool.call once per id; an empty id gets a synthesized one.
func (s *state) call(id, name string, input any, ts time.Time) string {
	return s.openCall(id, name, input, ts, false)
}

// heldCall is call for a format that writes a call only when it ends,
// together with its output, which alone says how long the call ran (Codex
// 0.40's rollouts): the tool.call, and every event after it, wait for the
// output so that ran can give the call its real start. The events keep the
// recording's order; only the call's time changes. A call whose output
// never comes keeps its own time (release).
func (s *state) heldCall(id, name string, input any, ts time.Time) string {
	return s.openCall(id, name, input, ts, true)
}

func (s *state) openCall(id, name string, input any, ts time.Time, hold bool) string {
	if id == "" {
		s.anon++
		id = fmt.Sprintf("reel-tool-%d", s.anon)
	}
	if _, ok := s.tools[id]; ok {
		return id
	}
	if name == "" {
		// The recording starts after the call (or the provider omits the
		// name): readers still need a name to show.
		name = "unknown"
	}
	s.tools[id] = &toolState{name: name}
	s.order = append(s.order, id)
	if hold {
		if s.waiting == nil {
			s.waiting = make(map[string]int)
		}
		s.holding = true
		s.waiting[id] = len(s.held)
	}
	s.send(transcript.ToolCall, ts, &transcript.ToolPayload{
		Name: name, CallID: id, Input: input, Fidelity: transcript.FidelityAgentEmitted,
	})
	return id
}

// ran tells a held call that it ran for d until end: it started at end-d
// when that is before the time the recording gave it (never before the
// recording's start). Calls not held, or already resulted, are left alone.
func (s *state) ran(id string, end time.Time, d time.Duration) {
	i, ok := s.waiting[id]
	if !ok || d <= 0 || end.IsZero() {
		return
	}
	ev := &s.held[i]
	start := end.Add(-d)
	if start.Before(s.res.Start) {
		start = s.res.Start
	}
	if start.Before(ev.Timestamp) || ev.Timestamp.IsZero() {
		ev.Timestamp = start
	}
}

// release emits the held events, every held call with the time it has now.
func (s *state) release() {
	if !s.holding {
		return
	}
	s.holding = false
	for _, ev := range s.held {
		s.put(ev)
	}
	clear(s.held) // the payloads are the reader's now
	s.held = s.held[:0]
	clear(s.waiting)
}

// result emits the tool.result of id, emitting its tool.call first when the
// recording starts after the call was made.
func (s *state) result(id, name string, output any, errMsg string, ts time.Time) {
	s.resultOf(id, name, output, errMsg, ts)
	if s.holding {
		// the output ends the wait of its call; the events go out when no
		// other call still waits for its own
		delete(s.waiting, id)
		if len(s.waiting) == 0 {
			s.release()
		}
	}
}

func (s *state) resultOf(id, name string, output any, errMsg string, ts time.Time) {
	if id == "" {
		s.skip("tool result without id")
		return
	}
	t, ok := s.tools[id]
	if !ok {
		s.call(id, name, nil, ts)
		t = s.tools[id]
	}
	if t.resulted {
		s.skip(SkipDupToolResult)
		return
	}
	t.resulted = true
	if name == "" {
		name = t.name
	}
	s.send(transcript.ToolResult, ts, &transcript.ToolPayload{
		Name: name, CallID: id, Output: output, Error: errMsg, Fidelity: transcript.FidelityAgentEmitted,
	})
}

// seen widens the span of the times the recording states (Result.Start,
// End) to ts.
func (s *state) seen(ts time.Time) {
	if ts.IsZero() {
		return
	}
	if s.res.Start.IsZero() || ts.Before(s.res.Start) {
		s.res.Start = ts
	}
	if ts.After(s.res.End) {
		s.res.End = ts
	}
}

// hasText reports whether the message being assembled has a text block.
func (s *state) hasText() bool {
	for _, b := range s.blocks {
		if b.Type == transcript.BlockText {
			return true
		}
	}
	return false
}

// flush emits the assistant message being assembled.
func (s *state) flush() {
	if len(s.blocks) == 0 {
		return
	}
	blocks := s.blocks
	s.blocks = nil
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type == transcript.BlockText {
			sb.WriteString(b.Text)
		}
	}
	if sb.Len() > 0 {
		s.lastText = sb.String()
	}
	s.send(transcript.MessageAssistant, s.msgTS, &transcript.MessagePayload{Role: "assistant", Blocks: blocks})
}

// user emits a user turn found in the recording.
func (s *state) user(texts []string, ts time.Time, prompt bool) {
	s.flush()
	blocks := make([]transcript.ContentBlock, 0, len(texts))
	for _, t := range texts {
		if t == "" {
			continue
		}
		blocks = append(blocks, transcript.ContentBlock{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: t})
	}
	if len(blocks) == 0 {
		return
	}
	if prompt && s.res.Prompt == "" {
		s.res.Prompt = strings.Join(texts, "\n")
	}
	s.send(transcript.MessageUser, ts, &transcript.MessagePayload{Role: "user", Blocks: blocks})
}

// setCWD keeps the first working directory the recording names.
func (s *state) setCWD(dir string) {
	if s.res.CWD == "" {
		s.res.CWD = dir
	}
}

func (s *state) setModel(m string) {
	if m != "" && m != "<synthetic>" {
		s.res.Agent.Model = m
	}
}

// addUsage adds one provider usage report; a report without its own total
// counts input + output.
func (s *state) addUsage(u transcript.Usage) {
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	s.usage.Add(u)
}

// setUsage replaces the usage with a cumulative report.
func (s *state) setUsage(u transcript.Usage) {
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	s.usage = u
}

func (s *state) closeAll(reason string) {
	s.release()
	s.flush()
	for _, id := range s.order {
		t := s.tools[id]
		if !t.resulted {
			t.resulted = true
			s.send(transcript.ToolResult, time.Time{}, &transcript.ToolPayload{
				Name: t.name, CallID: id, Error: "no result: " + reason, Fidelity: transcript.FidelityAgentEmitted,
			})
		}
	}
}

func (s *state) final() *Result {
	r := s.res
	r.Agent.Usage = s.usage
	r.Agent.Output = s.finalText
	if r.Agent.Output == "" {
		r.Agent.Output = s.lastText
	}
	if len(s.skipped) > 0 {
		r.Agent.Skipped = s.skipped
	}
	return &r
}
