package flowstudio

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// eventLines renders events for an exact comparison: everything but seq
// and the run ids, which a new import assigns (child run ids are replaced
// by their position among the children).
func eventLines(t *testing.T, events []transcript.ExchangeEvent, children map[string]int) []string {
	t.Helper()
	out := make([]string, len(events))
	for i, e := range events {
		p, err := json.Marshal(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(p, &v); err != nil {
			t.Fatal(err)
		}
		p, _ = json.Marshal(v) // keys sorted, numbers respelled alike
		child := ""
		if e.ChildRunID != "" {
			child = fmt.Sprintf(" child#%d", children[e.ChildRunID])
		}
		out[i] = fmt.Sprintf("%s %s#%d %s%s %s", e.Type, e.Path, e.Iteration, e.Timestamp.Format("2006-01-02T15:04:05.000000Z"), child, p)
	}
	return out
}

func sameEvents(t *testing.T, name string, want, got []string) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s: %d events back, want %d", name, len(got), len(want))
	}
	for i := 0; i < min(len(want), len(got)); i++ {
		if want[i] != got[i] {
			t.Errorf("%s: event %d differs:\nwant %s\n got %s", name, i+1, want[i], got[i])
			return
		}
	}
}

// reel → Flow Studio → reel gives back the same events in the same order:
// payloads, results (the run's cost included), timestamps, and the
// tool.call a CLI agent's stream put before the message that issued it.
func TestRoundTripExact(t *testing.T) {
	t.Run("exchange", func(t *testing.T) {
		orig := transcripttest.ExchangeSample(t)
		// A live CLI stream's order: the call before the message that
		// carries its tool_use.
		orig = callBeforeMessage(t, orig)
		cost := 0.0421
		last := &orig[len(orig)-1]
		var rr transcript.RunResult
		if err := transcript.DecodeResult(last.Step().Result, &rr); err != nil {
			t.Fatal(err)
		}
		rr.CostUSD = &cost
		sp := *last.Step()
		sp.Result = rr
		last.Payload = &sp
		dir := filepath.Join(t.TempDir(), "run")
		if _, err := Export(dir, Run{Events: orig}); err != nil {
			t.Fatal(err)
		}
		back, err := Import(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		path := transcripttest.RecordAll(t, t.TempDir(), back.Events)
		got, err := transcript.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, "run", eventLines(t, orig, nil), eventLines(t, got, nil))
		var gr transcript.RunResult
		if err := transcript.DecodeResult(got[len(got)-1].Step().Result, &gr); err != nil || gr.CostUSD == nil || *gr.CostUSD != cost {
			t.Errorf("run cost %v, want %v (%v)", gr.CostUSD, cost, err)
		}
	})
	t.Run("children", func(t *testing.T) {
		dir, root, child := exportSampleWithChild(t)
		res, err := Import(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Children) != 1 {
			t.Fatalf("%d children", len(res.Children))
		}
		sameEvents(t, "root", eventLines(t, root, map[string]int{transcripttest.ChildID: 1}),
			eventLines(t, res.Events, map[string]int{res.Children[0].RunID: 1}))
		sameEvents(t, "child", eventLines(t, child, nil), eventLines(t, res.Children[0].Events, nil))
	})
}

// callBeforeMessage moves each tool.call before the message.assistant
// holding its tool_use block, as a CLI agent's stream records them.
func callBeforeMessage(t *testing.T, evs []transcript.ExchangeEvent) []transcript.ExchangeEvent {
	t.Helper()
	out := append([]transcript.ExchangeEvent(nil), evs...)
	moved := 0
	for i := 1; i < len(out); i++ {
		if out[i].Type != transcript.ToolCall || out[i-1].Type != transcript.MessageAssistant {
			continue
		}
		for _, b := range out[i-1].Message().Blocks {
			if b.Type == transcript.BlockToolUse && b.ToolID == out[i].Tool().CallID {
				out[i], out[i-1] = out[i-1], out[i]
				out[i-1].Timestamp, out[i].Timestamp = out[i].Timestamp, out[i-1].Timestamp
				moved++
				break
			}
		}
	}
	if moved == 0 {
		t.Fatal("the sample has no tool.call after its message")
	}
	return out
}
