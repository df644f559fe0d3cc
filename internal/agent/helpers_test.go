package agent

import (
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

const testRunID = "0b7e4a3c-5d1f-4e2a-9b8c-7d6e5f4a3b2c"

// collector records what Run emits and checks every event encodes as a
// valid transcript line, as the real recorder requires.
type collector struct {
	t      testing.TB
	mu     sync.Mutex
	events []transcript.ExchangeEvent
	// failAt makes the n-th emit (1-based) fail, to test recording errors.
	failAt int
}

func newCollector(t testing.TB) *collector { return &collector{t: t} }

func (c *collector) emit(e transcript.ExchangeEvent) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failAt > 0 && len(c.events)+1 == c.failAt {
		return errDiskFull
	}
	e.Seq = uint64(len(c.events) + 1)
	e.RunID = testRunID
	e.Path = "agent_step"
	if _, err := transcript.AppendEvent(nil, &e); err != nil {
		c.t.Errorf("event %d (%s) does not encode: %v", e.Seq, e.Type, err)
	}
	c.events = append(c.events, e)
	return nil
}

type diskFull struct{}

func (diskFull) Error() string { return "disk full" }

var errDiskFull error = diskFull{}

func (c *collector) types() []transcript.EventType {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]transcript.EventType, len(c.events))
	for i, e := range c.events {
		out[i] = e.Type
	}
	return out
}

// render encodes the events with fixed timestamps, for golden files.
func (c *collector) render(t testing.TB) []byte {
	t.Helper()
	var buf []byte
	for _, e := range c.events {
		e.Timestamp = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		var err error
		if buf, err = transcript.AppendEvent(buf, &e); err != nil {
			t.Fatal(err)
		}
		buf = append(buf, '\n')
	}
	return buf
}

// checkPairs asserts every tool.call has exactly one tool.result with the
// same call_id, after it, and returns the calls by fidelity.
func (c *collector) checkPairs(t testing.TB) map[transcript.Fidelity]int {
	t.Helper()
	open := map[string]bool{}
	done := map[string]bool{}
	byFid := map[transcript.Fidelity]int{}
	for _, e := range c.events {
		p := e.Tool()
		switch e.Type {
		case transcript.ToolCall:
			if open[p.CallID] || done[p.CallID] {
				t.Errorf("call_id %s called twice", p.CallID)
			}
			open[p.CallID] = true
			byFid[p.Fidelity]++
		case transcript.ToolResult:
			if !open[p.CallID] {
				t.Errorf("tool.result %s without an open tool.call", p.CallID)
			}
			delete(open, p.CallID)
			done[p.CallID] = true
		}
	}
	for id := range open {
		t.Errorf("tool.call %s never got a tool.result", id)
	}
	return byFid
}
