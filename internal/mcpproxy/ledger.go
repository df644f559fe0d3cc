package mcpproxy

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/reelhq/reel/transcript"
)

// Emit records one event of the step (the caller fills path, iteration
// and run id). It must be safe for concurrent use: the ledger writes from
// the MCP server's goroutines, the agent's stream and its own timers.
type Emit func(transcript.ExchangeEvent) error

// DefaultGrace is how long the router's pair of a call waits, after the
// tool finished, for the agent's stream to report the call before it is
// written under a reel id instead of the agent's. A CLI that reports a
// tool once it finished (opencode) may do so only after its next model
// request, which on a busy machine takes seconds: the grace is generous,
// and only a client that never reports its calls waits it out.
const DefaultGrace = time.Minute

// Ledger records the calls of one agent process through the proxy exactly
// once and ties each to the agent's own report of it.
//
// Two seams see a proxied call: the router (reel's MCP server), which
// runs it, and the agent's stream, which reports it. The router's pair is
// the record; the agent's pair (the normalizer's agent_emitted tool.call
// and tool.result) is dropped, and the agent's tool_use block in its
// message.assistant stays as the agent emitted it. The tie is the
// call_id: the router's pair is recorded under the agent's own tool id,
// so the block names its pair exactly as an unproxied block names the
// agent's. The id comes from the request (a client that names the call
// in _meta, as Claude Code does), else from the stream: the oldest report
// of the same tool with the same arguments not tied yet, whether it came
// before the call (most CLIs report a use before running it) or after
// (opencode reports a tool once it finished). Until the id is known the
// router's events wait in the ledger, their timestamps those of the call;
// a call no report names within Grace after it finished, or by Close, is
// written under its reel id ("mcp_…").
//
// A report of a proxied tool that no router call answers was refused by
// the agent itself before it reached reel (a permission check, a
// malformed call): it is recorded as the agent's own pair, whose result
// carries the agent's error.
type Ledger struct {
	emit  Emit
	names map[string]string
	grace time.Duration
	wait  time.Duration // see closeWait

	mu       sync.Mutex
	byKey    map[string]*slot
	order    []*slot // router calls, in arrival order
	byAgent  map[string]*slot
	held     []*report
	inflight sync.WaitGroup
	err      error
	closed   bool
}

// slot is one call through the router.
type slot struct {
	key, tool string
	input     string // canonical JSON
	agentID   string
	call      *transcript.ExchangeEvent
	result    *transcript.ExchangeEvent
	wroteCall bool
	settled   bool // the result is written (or will never come)
	reported  bool // the agent's stream reported the call's result
	timer     *time.Timer
}

// report is an agent's tool.call of a proxied tool no router call is tied
// to yet.
type report struct {
	id, tool string
	input    string
	ev       transcript.ExchangeEvent
	// result is the agent's tool.result, when it came before the router
	// call this report waits for (see twinPending).
	result *transcript.ExchangeEvent
}

// NewLedger returns a ledger that writes through emit. names maps the
// names the agent calls the proxied tools by (claude's
// "mcp__reel__Read") to the tools (Read); grace 0 means DefaultGrace.
func NewLedger(emit Emit, names map[string]string, grace time.Duration) *Ledger {
	if grace <= 0 {
		grace = DefaultGrace
	}
	return &Ledger{emit: emit, names: names, grace: grace, wait: closeWait, byKey: map[string]*slot{}, byAgent: map[string]*slot{}}
}

// Err returns the first error writing an event, which stops the step.
func (l *Ledger) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// newKey returns a call id of reel's own, unique in any run.
func newKey() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "mcp_" + hex.EncodeToString(b)
}

// Open registers a call arriving at the router and returns the id the
// router records it under for now (the ledger rewrites it to the agent's
// id when it learns that id). clientID is the id the request named the
// call by, or "".
func (l *Ledger) Open(tool string, input json.RawMessage, clientID string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &slot{key: newKey(), tool: tool, input: canonical(input)}
	l.byKey[s.key] = s
	l.order = append(l.order, s)
	l.inflight.Add(1)
	if _, dup := l.byAgent[clientID]; dup {
		// A client retrying a call names it again: the retry is a call
		// of its own, under reel's id.
		clientID = ""
	}
	var i int
	if clientID != "" {
		i = l.heldIndex(func(r *report) bool { return r.id == clientID })
	} else {
		i = l.heldIndex(func(r *report) bool { return r.tool == tool && r.input == s.input })
	}
	if i >= 0 {
		r := l.held[i]
		l.unhold(i)
		clientID, s.reported = r.id, r.result != nil
	}
	if clientID != "" {
		l.tie(s, clientID)
	}
	return s.key
}

// RouterEmit receives the router's tool.call and tool.result for calls
// opened with Open.
func (l *Ledger) RouterEmit(ev transcript.ExchangeEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.prune()
	p := ev.Tool()
	if p == nil {
		return fmt.Errorf("mcp proxy: router event %s without a tool payload", ev.Type)
	}
	s, ok := l.byKey[p.CallID]
	if !ok {
		return fmt.Errorf("mcp proxy: router event %s for unknown call %s", ev.Type, p.CallID)
	}
	switch ev.Type {
	case transcript.ToolCall:
		if s.call != nil {
			return fmt.Errorf("mcp proxy: second tool.call for call %s", p.CallID)
		}
		s.call = &ev
	case transcript.ToolResult:
		if s.call == nil || s.result != nil {
			return fmt.Errorf("mcp proxy: tool.result out of turn for call %s", p.CallID)
		}
		s.result = &ev
		l.inflight.Done()
	}
	switch {
	case s.agentID != "" || l.closed:
		l.flush(s)
	case s.result != nil:
		s.timer = time.AfterFunc(l.grace, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if s.agentID == "" {
				l.flush(s)
			}
		})
	}
	if l.err != nil && ev.Type == transcript.ToolCall {
		// The router gives up on a call it could not record: no result
		// follows.
		s.settled = true
		l.inflight.Done()
	}
	return l.err
}

// Agent records an event of the agent's stream: the agent's own pair of
// a proxied call is dropped (its tie made), everything else is written.
func (l *Ledger) Agent(ev transcript.ExchangeEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.prune()
	p := ev.Tool()
	if p == nil || p.Fidelity != transcript.FidelityAgentEmitted {
		return l.write(ev)
	}
	switch ev.Type {
	case transcript.ToolCall:
		tool, ok := l.names[p.Name]
		if !ok {
			break
		}
		if _, tied := l.byAgent[p.CallID]; tied {
			return l.err
		}
		in := canonical(p.Input)
		if s := l.untied(func(s *slot) bool { return s.tool == tool && s.input == in }); s != nil {
			l.tie(s, p.CallID)
			return l.err
		}
		l.held = append(l.held, &report{id: p.CallID, tool: tool, input: in, ev: ev})
		return l.err
	case transcript.ToolResult:
		if s, tied := l.byAgent[p.CallID]; tied {
			s.reported = true
			return l.err
		}
		i := l.heldIndex(func(r *report) bool { return r.id == p.CallID })
		if i < 0 {
			break
		}
		r := l.held[i]
		// The agent saw a result, so the router answered the call
		// already if it reached reel at all.
		s := l.untied(func(s *slot) bool { return s.tool == r.tool && s.input == r.input })
		if s == nil && l.twinPending(r) {
			// An identical call took this report's router call for its
			// own while its report still waits for a result: the two are
			// interchangeable, and this report is answered by the
			// router call still to come for that twin.
			r.result = &ev
			return l.err
		}
		if s == nil {
			// The arguments may differ as the agent reports them, the
			// tool may not.
			s = l.untied(func(s *slot) bool { return s.tool == r.tool && s.result != nil })
		}
		if s != nil {
			l.unhold(i)
			l.tie(s, r.id)
			s.reported = true
			return l.err
		}
		l.unhold(i)
		if err := l.write(r.ev); err != nil {
			return err
		}
	}
	return l.write(ev)
}

// closeWait bounds how long Close waits for calls still running in the
// router; the server's own shutdown has cancelled them by then.
const closeWait = 10 * time.Second

// Close waits for the calls still running in the router (the caller
// stopped its server first, which cancels them), writes what waits in the
// ledger, and returns the first write error. A call still running after
// closeWait is closed with "no result: <reason>"; so are reports the
// agent's stream left without a result, written as the agent's own.
func (l *Ledger) Close(reason string) error {
	done := make(chan struct{})
	go func() { l.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(l.wait):
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, s := range l.order {
		if s.settled {
			continue
		}
		if s.call != nil && s.result == nil {
			p := *s.call.Tool()
			p.Error = "no result: " + reason
			ev := transcript.ExchangeEvent{Type: transcript.ToolResult, Timestamp: time.Now(), Payload: &p}
			s.result = &ev
		}
		l.flush(s)
	}
	for _, r := range l.held {
		l.write(r.ev)
		if r.result != nil {
			l.write(*r.result)
			continue
		}
		p := *r.ev.Tool()
		p.Input, p.Output, p.Error = nil, nil, "no result: "+reason
		l.write(transcript.ExchangeEvent{Type: transcript.ToolResult, Timestamp: time.Now(), Payload: &p})
	}
	l.held = nil
	return l.err
}

// tie records that the agent calls s by id, and writes what of s waits.
func (l *Ledger) tie(s *slot, id string) {
	s.agentID = id
	l.byAgent[id] = s
	l.flush(s)
}

// flush writes the events of s the router has given and the ledger holds
// still, under the agent's id when known, else under reel's.
func (l *Ledger) flush(s *slot) {
	if s.settled {
		return
	}
	id := s.agentID
	if id == "" {
		id = s.key
	}
	if s.call != nil && !s.wroteCall {
		s.wroteCall = true
		l.write(withID(*s.call, id))
	}
	if s.result != nil {
		if s.timer != nil {
			s.timer.Stop()
		}
		s.settled = true
		l.write(withID(*s.result, id))
	}
}

func withID(ev transcript.ExchangeEvent, id string) transcript.ExchangeEvent {
	p := *ev.Tool()
	p.CallID = id
	ev.Payload = &p
	return ev
}

// write emits ev unless an earlier write failed; the first failure sticks.
func (l *Ledger) write(ev transcript.ExchangeEvent) error {
	if l.err != nil {
		return l.err
	}
	if err := l.emit(ev); err != nil {
		l.err = fmt.Errorf("mcp proxy: record %s: %w", ev.Type, err)
	}
	return l.err
}

// untied returns the router call no agent id names yet that ok accepts:
// the oldest still waiting, else the oldest already written under its
// reel id (its report came too late to name it, but still must not be
// recorded a second time).
func (l *Ledger) untied(ok func(*slot) bool) *slot {
	var late *slot
	for _, s := range l.order {
		if s.agentID != "" || !ok(s) {
			continue
		}
		if !s.settled {
			return s
		}
		if late == nil {
			late = s
		}
	}
	return late
}

// maxLate bounds the calls written under reel's id that the ledger keeps
// for a report coming after them.
const maxLate = 256

// prune drops from order the calls nothing can need any more (written,
// tied and reported), and the oldest of those written under reel's id
// past maxLate, so that a long step's calls cost the same each. It
// compacts only when at least half of order can go.
func (l *Ledger) prune() {
	if len(l.order) < 64 {
		return
	}
	done, late := 0, 0
	for _, s := range l.order {
		switch {
		case !s.settled:
		case s.agentID != "" && s.reported:
			done++
		case s.agentID == "":
			late++
		}
	}
	drop := done + max(late-maxLate, 0)
	if drop*2 < len(l.order) {
		return
	}
	kept := l.order[:0]
	for _, s := range l.order {
		switch {
		case s.settled && s.agentID != "" && s.reported:
			delete(l.byKey, s.key)
			delete(l.byAgent, s.agentID)
			continue
		case s.settled && s.agentID == "" && late > maxLate:
			late--
			delete(l.byKey, s.key)
			continue
		}
		kept = append(kept, s)
	}
	clear(l.order[len(kept):])
	l.order = kept
}

// twinPending reports whether a router call with r's tool and arguments
// is tied to another report whose result the agent has not reported yet.
func (l *Ledger) twinPending(r *report) bool {
	for _, s := range l.order {
		if s.agentID != "" && !s.reported && s.tool == r.tool && s.input == r.input {
			return true
		}
	}
	return false
}

func (l *Ledger) heldIndex(ok func(*report) bool) int {
	for i, r := range l.held {
		if ok(r) {
			return i
		}
	}
	return -1
}

func (l *Ledger) unhold(i int) { l.held = append(l.held[:i], l.held[i+1:]...) }

// canonical returns v as compact JSON with sorted keys, so arguments the
// router got and arguments the agent reports compare equal however each
// side spelled them. A value that is not JSON compares as itself.
func canonical(v any) string {
	var raw []byte
	switch x := v.(type) {
	case nil:
		return "{}"
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	case string:
		raw = []byte(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		raw = b
	}
	if len(raw) == 0 {
		return "{}"
	}
	var d any
	if err := json.Unmarshal(raw, &d); err != nil {
		return string(raw)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return string(raw)
	}
	return string(b)
}
