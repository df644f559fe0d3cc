package mcpproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// sink collects what a ledger writes.
type sink struct {
	mu     sync.Mutex
	events []transcript.ExchangeEvent
	fail   error
}

func (s *sink) emit(ev transcript.ExchangeEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.events = append(s.events, ev)
	return nil
}

// lines renders the written events as "type fidelity call_id", one per
// event, for comparisons.
func (s *sink) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, ev := range s.events {
		if p := ev.Tool(); p != nil {
			out = append(out, fmt.Sprintf("%s %s %s", ev.Type, p.Fidelity, p.CallID))
		} else {
			out = append(out, string(ev.Type))
		}
	}
	return out
}

var claudeNames = map[string]string{"mcp__reel__Read": "Read", "mcp__reel__Write": "Write", "mcp__reel__Bash": "Bash"}

// routerCall plays what tools.Router.Call does through the ledger: Open,
// then its tool.call, then (after run) its tool.result.
func routerCall(t *testing.T, l *Ledger, tool, input, clientID string, run func()) {
	t.Helper()
	key := l.Open(tool, json.RawMessage(input), clientID)
	call := &transcript.ToolPayload{Name: tool, CallID: key, Input: json.RawMessage(input), Fidelity: transcript.FidelityRouter}
	if err := l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolCall, Timestamp: time.Now(), Payload: call}); err != nil {
		t.Fatal(err)
	}
	if run != nil {
		run()
	}
	res := *call
	res.Output = "ok"
	if err := l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolResult, Timestamp: time.Now(), Payload: &res}); err != nil {
		t.Fatal(err)
	}
}

func agentEvent(typ transcript.EventType, name, id, input, errMsg string) transcript.ExchangeEvent {
	p := &transcript.ToolPayload{Name: name, CallID: id, Fidelity: transcript.FidelityAgentEmitted, Error: errMsg}
	if typ == transcript.ToolCall {
		p.Input = json.RawMessage(input)
	} else {
		p.Output = "agent says ok"
	}
	return transcript.ExchangeEvent{Type: typ, Timestamp: time.Now(), Payload: p}
}

func agent(t *testing.T, l *Ledger, typ transcript.EventType, name, id, input, errMsg string) {
	t.Helper()
	if err := l.Agent(agentEvent(typ, name, id, input, errMsg)); err != nil {
		t.Fatal(err)
	}
}

func assistant(t *testing.T, l *Ledger, name, id string) {
	t.Helper()
	err := l.Agent(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Timestamp: time.Now(), Payload: &transcript.MessagePayload{
		Role: "assistant", Blocks: []transcript.ContentBlock{{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: name, ToolID: id}},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func wantLines(t *testing.T, s *sink, want ...string) {
	t.Helper()
	got := s.lines()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("written:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Claude Code names the call in _meta: the router's pair is written at
// once under the agent's id, and the agent's own pair goes nowhere.
func TestLedgerClientNamesTheCall(t *testing.T) {
	s := &sink{}
	l := NewLedger(s.emit, claudeNames, time.Hour)
	agent(t, l, transcript.ToolCall, "mcp__reel__Write", "toolu_1", `{"file_path":"a","content":"x"}`, "")
	assistant(t, l, "mcp__reel__Write", "toolu_1")
	routerCall(t, l, "Write", `{"content":"x","file_path":"a"}`, "toolu_1", nil)
	agent(t, l, transcript.ToolResult, "mcp__reel__Write", "toolu_1", "", "")
	if err := l.Close("done"); err != nil {
		t.Fatal(err)
	}
	wantLines(t, s, "message.assistant", "tool.call router toolu_1", "tool.result router toolu_1")
}

// Most CLIs report a use before they run it: the call arriving at the
// router takes the id of the report with the same tool and arguments.
func TestLedgerReportBeforeCall(t *testing.T) {
	s := &sink{}
	l := NewLedger(s.emit, map[string]string{"reel.Read": "Read"}, time.Hour)
	agent(t, l, transcript.ToolCall, "reel.Read", "item_1", `{"file_path":"b"}`, "")
	agent(t, l, transcript.ToolCall, "reel.Read", "item_2", `{"file_path":"a"}`, "")
	routerCall(t, l, "Read", `{"file_path":"a"}`, "", nil)
	routerCall(t, l, "Read", `{"file_path":"b"}`, "", nil)
	agent(t, l, transcript.ToolResult, "reel.Read", "item_2", "", "")
	agent(t, l, transcript.ToolResult, "reel.Read", "item_1", "", "")
	if err := l.Close("done"); err != nil {
		t.Fatal(err)
	}
	wantLines(t, s, "tool.call router item_2", "tool.result router item_2", "tool.call router item_1", "tool.result router item_1")
}

// opencode reports a tool once it finished: the router's pair waits for
// the report and is written under the agent's id when it comes.
func TestLedgerReportAfterResult(t *testing.T) {
	s := &sink{}
	l := NewLedger(s.emit, map[string]string{"reel_Bash": "Bash"}, time.Hour)
	routerCall(t, l, "Bash", `{"command":"true"}`, "", nil)
	wantLines(t, s)
	agent(t, l, transcript.ToolCall, "reel_Bash", "call_9", `{"command":"true"}`, "")
	agent(t, l, transcript.ToolResult, "reel_Bash", "call_9", "", "")
	assistant(t, l, "reel_Bash", "call_9")
	if err := l.Close("done"); err != nil {
		t.Fatal(err)
	}
	wantLines(t, s, "tool.call router call_9", "tool.result router call_9", "message.assistant")
}

// A call no report names within the grace is written under reel's id;
// a report that comes later still does not make a second pair.
func TestLedgerNoReportThenLate(t *testing.T) {
	s := &sink{}
	l := NewLedger(s.emit, claudeNames, 20*time.Millisecond)
	routerCall(t, l, "Read", `{"file_path":"a"}`, "", nil)
	deadline := time.Now().Add(5 * time.Second)
	for len(s.lines()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	got := s.lines()
	if len(got) != 2 || !strings.HasPrefix(got[0], "tool.call router mcp_") || got[1] != strings.Replace(got[0], "call", "result", 1) {
		t.Fatalf("after the grace: %q", got)
	}
	agent(t, l, transcript.ToolCall, "mcp__reel__Read", "toolu_late", `{"file_path":"a"}`, "")
	agent(t, l, transcript.ToolResult, "mcp__reel__Read", "toolu_late", "", "")
	if err := l.Close("done"); err != nil {
		t.Fatal(err)
	}
	if n := len(s.lines()); n != 2 {
		t.Fatalf("late report written: %q", s.lines())
	}
}

// A use the agent refused before it reached reel (no router call) is the
// agent's own pair, with its error.
func TestLedgerRefusedByAgent(t *testing.T) {
	s := &sink{}
	l := NewLedger(s.emit, claudeNames, time.Hour)
	agent(t, l, transcript.ToolCall, "mcp__reel__Bash", "toolu_2", `{"command":"rm -rf /"}`, "")
	agent(t, l, transcript.ToolResult, "mcp__reel__Bash", "toolu_2", "", "permission denied")
	if err := l.Close("done"); err != nil {
		t.Fatal(err)
	}
	wantLines(t, s, "tool.call agent_emitted toolu_2", "tool.result agent_emitted toolu_2")
}

// Tools the agent runs itself (coexistence) pass through untouched.
func TestLedgerNativeToolsPass(t *testing.T) {
	s := &sink{}
	l := NewLedger(s.emit, claudeNames, time.Hour)
	agent(t, l, transcript.ToolCall, "Bash", "toolu_3", `{"command":"ls"}`, "")
	agent(t, l, transcript.ToolResult, "Bash", "toolu_3", "", "")
	if err := l.Close("done"); err != nil {
		t.Fatal(err)
	}
	wantLines(t, s, "tool.call agent_emitted toolu_3", "tool.result agent_emitted toolu_3")
}

// An agent that reports arguments other than those it sent is still tied
// by the tool once it has seen the result.
func TestLedgerArgumentsDiffer(t *testing.T) {
	s := &sink{}
	l := NewLedger(s.emit, map[string]string{"reel_Read": "Read"}, time.Hour)
	agent(t, l, transcript.ToolCall, "reel_Read", "c1", `{"file_path":"a","offset":"2"}`, "")
	routerCall(t, l, "Read", `{"file_path":"a","offset":2}`, "", nil)
	agent(t, l, transcript.ToolResult, "reel_Read", "c1", "", "")
	if err := l.Close("done"); err != nil {
		t.Fatal(err)
	}
	wantLines(t, s, "tool.call router c1", "tool.result router c1")
}

// A report left without result when the stream ends is the agent's own
// call, closed as dangling; a router call without result is closed too.
func TestLedgerCloseDangling(t *testing.T) {
	s := &sink{}
	l := NewLedger(s.emit, claudeNames, time.Hour)
	l.wait = 10 * time.Millisecond
	agent(t, l, transcript.ToolCall, "mcp__reel__Write", "toolu_4", `{"file_path":"z","content":""}`, "")
	key := l.Open("Read", json.RawMessage(`{"file_path":"q"}`), "")
	call := &transcript.ToolPayload{Name: "Read", CallID: key, Input: json.RawMessage(`{"file_path":"q"}`), Fidelity: transcript.FidelityRouter}
	if err := l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolCall, Timestamp: time.Now(), Payload: call}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close("agent killed"); err != nil {
		t.Fatal(err)
	}
	got := s.lines()
	if len(got) != 4 || got[0] != "tool.call router "+key || got[1] != "tool.result router "+key ||
		got[2] != "tool.call agent_emitted toolu_4" || got[3] != "tool.result agent_emitted toolu_4" {
		t.Fatalf("closed: %q", got)
	}
	for _, i := range []int{1, 3} {
		if e := s.events[i].Tool().Error; e != "no result: agent killed" {
			t.Fatalf("event %d error %q", i, e)
		}
	}
}

// The first write error sticks and reaches the router, which stops the
// call.
func TestLedgerWriteErrorSticks(t *testing.T) {
	boom := errors.New("disk full")
	s := &sink{fail: boom}
	l := NewLedger(s.emit, claudeNames, time.Hour)
	key := l.Open("Read", json.RawMessage(`{}`), "toolu_5")
	err := l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolCall, Timestamp: time.Now(),
		Payload: &transcript.ToolPayload{Name: "Read", CallID: key, Fidelity: transcript.FidelityRouter}})
	if !errors.Is(err, boom) {
		t.Fatalf("RouterEmit: %v", err)
	}
	if err := l.Close("done"); !errors.Is(err, boom) {
		t.Fatalf("Close: %v", err)
	}
}

// Property: however the reports and the calls interleave, every call is
// written exactly once as a router pair under the agent's id, and the
// agent's own pair never.
func TestLedgerInterleavingsProperty(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := &sink{}
		l := NewLedger(s.emit, map[string]string{"reel.Read": "Read"}, time.Hour)
		const n = 6
		var wg sync.WaitGroup
		for i := range n {
			id := fmt.Sprintf("item_%d", i)
			input := fmt.Sprintf(`{"file_path":"f%d"}`, i%3) // some calls identical
			reportFirst := rng.IntN(3)
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch reportFirst {
				case 0: // report, call, agent result
					agent(t, l, transcript.ToolCall, "reel.Read", id, input, "")
					routerCall(t, l, "Read", input, "", nil)
					agent(t, l, transcript.ToolResult, "reel.Read", id, "", "")
				case 1: // report while the tool runs
					routerCall(t, l, "Read", input, "", func() {
						agent(t, l, transcript.ToolCall, "reel.Read", id, input, "")
					})
					agent(t, l, transcript.ToolResult, "reel.Read", id, "", "")
				default: // report after the result
					routerCall(t, l, "Read", input, "", nil)
					agent(t, l, transcript.ToolCall, "reel.Read", id, input, "")
					agent(t, l, transcript.ToolResult, "reel.Read", id, "", "")
				}
			}()
		}
		wg.Wait()
		if err := l.Close("done"); err != nil {
			t.Fatal(err)
		}
		calls, results := map[string]int{}, map[string]int{}
		for _, ev := range s.events {
			p := ev.Tool()
			if p.Fidelity != transcript.FidelityRouter {
				t.Fatalf("seed %d: agent pair written: %s %s", seed, ev.Type, p.CallID)
			}
			if ev.Type == transcript.ToolCall {
				calls[p.CallID]++
			} else {
				if calls[p.CallID] != 1 {
					t.Fatalf("seed %d: result %s before its call", seed, p.CallID)
				}
				results[p.CallID]++
			}
		}
		if len(calls) != n || len(results) != n {
			t.Fatalf("seed %d: %d calls, %d results, want %d each: %q", seed, len(calls), len(results), n, s.lines())
		}
		for i := range n {
			id := fmt.Sprintf("item_%d", i)
			if calls[id] != 1 || results[id] != 1 {
				t.Fatalf("seed %d: %s written %d/%d times: %q", seed, id, calls[id], results[id], s.lines())
			}
		}
	}
}

// FuzzLedger drives a ledger with any sequence of router calls, agent
// reports and results (one goroutine, calls among three tools and two
// argument sets) and checks what it wrote: no call id twice, every result
// after its call, every router call answered exactly once by Close.
func FuzzLedger(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{3, 3, 0, 0, 1, 1, 2, 2, 5, 5})
	f.Fuzz(func(t *testing.T, ops []byte) {
		s := &sink{}
		l := NewLedger(s.emit, map[string]string{"reel.Read": "Read", "reel.Bash": "Bash"}, time.Hour)
		l.wait = time.Millisecond
		type open struct{ key, tool, in string }
		var running []open
		reported := map[string]bool{}
		nextAgent, routerCalls := 0, 0
		tools := []string{"Read", "Bash"}
		inputs := []string{`{"a":1}`, `{"b":2}`}
		for i, op := range ops {
			tool, in := tools[int(op>>3)%2], inputs[int(op>>4)%2]
			switch op % 6 {
			case 0: // a call arrives at the router
				key := l.Open(tool, json.RawMessage(in), "")
				l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolCall, Timestamp: time.Now(), Payload: &transcript.ToolPayload{Name: tool, CallID: key, Input: json.RawMessage(in), Fidelity: transcript.FidelityRouter}})
				running = append(running, open{key, tool, in})
				routerCalls++
			case 1: // a router call returns
				if len(running) > 0 {
					c := running[0]
					running = running[1:]
					l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolResult, Timestamp: time.Now(), Payload: &transcript.ToolPayload{Name: c.tool, CallID: c.key, Output: "x", Fidelity: transcript.FidelityRouter}})
				}
			case 2, 3: // the agent reports a use
				nextAgent++
				id := fmt.Sprintf("a%d", nextAgent)
				l.Agent(agentEvent(transcript.ToolCall, "reel."+tool, id, in, ""))
				reported[id] = false
			case 4: // the agent reports a result
				for id, done := range reported {
					if !done {
						reported[id] = true
						l.Agent(agentEvent(transcript.ToolResult, "reel.Read", id, "", ""))
						break
					}
				}
			case 5: // a client that names its call
				key := l.Open(tool, json.RawMessage(in), fmt.Sprintf("c%d", i))
				l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolCall, Timestamp: time.Now(), Payload: &transcript.ToolPayload{Name: tool, CallID: key, Input: json.RawMessage(in), Fidelity: transcript.FidelityRouter}})
				running = append(running, open{key, tool, in})
				routerCalls++
			}
		}
		for _, c := range running {
			l.RouterEmit(transcript.ExchangeEvent{Type: transcript.ToolResult, Timestamp: time.Now(), Payload: &transcript.ToolPayload{Name: c.tool, CallID: c.key, Output: "x", Fidelity: transcript.FidelityRouter}})
		}
		if err := l.Close("end"); err != nil {
			t.Fatal(err)
		}
		calls, results := map[string]bool{}, map[string]bool{}
		routerPairs := 0
		for _, ev := range s.events {
			p := ev.Tool()
			if p == nil {
				continue
			}
			if ev.Type == transcript.ToolCall {
				if calls[p.CallID] {
					t.Fatalf("call %s written twice: %q", p.CallID, s.lines())
				}
				calls[p.CallID] = true
				if p.Fidelity == transcript.FidelityRouter {
					routerPairs++
				}
			} else {
				if !calls[p.CallID] || results[p.CallID] {
					t.Fatalf("result %s out of turn: %q", p.CallID, s.lines())
				}
				results[p.CallID] = true
			}
		}
		if len(calls) != len(results) || routerPairs != routerCalls {
			t.Fatalf("%d calls, %d results, %d router pairs for %d router calls: %q", len(calls), len(results), routerPairs, routerCalls, s.lines())
		}
	})
}
