package rerun

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/transcript"
)

// writeRun writes a run of n loop iterations, each an agent step with a
// message and a tool pair, cut short in its last iteration.
func writeRun(tb testing.TB, n int) string {
	tb.Helper()
	r, err := transcript.Create(tb.TempDir(), transcript.NewRunID(), transcript.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	rec := func(e transcript.ExchangeEvent) {
		if _, err := r.Record(e); err != nil {
			tb.Fatal(err)
		}
	}
	rec(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "bench", Kind: transcript.KindWorkflow}})
	rec(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "each", Payload: &transcript.StepPayload{Name: "each", Kind: transcript.KindForEach}})
	for g := range n {
		rec(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "each.ask", Iteration: g, Payload: &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent}})
		rec(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: "each.ask", Iteration: g, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "Found 2 issues in main.go: the loop at line 12 never terminates and err is shadowed."}}}})
		rec(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "each.ask", Iteration: g, Payload: &transcript.ToolPayload{Name: "Read", CallID: fmt.Sprint(g), Input: map[string]string{"path": "main.go"}, Fidelity: transcript.FidelityRouter}})
		rec(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "each.ask", Iteration: g, Payload: &transcript.ToolPayload{Name: "Read", CallID: fmt.Sprint(g), Output: "package main\n", Fidelity: transcript.FidelityRouter}})
		if g < n-1 {
			rec(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "each.ask", Iteration: g, Payload: &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent,
				Result: transcript.AgentResult{Output: "ok", Usage: transcript.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}}}})
		}
	}
	r.Close()
	return r.Path()
}

// stdlibLoad is the baseline: decode every line with encoding/json and
// keep each completed step's result by path and iteration, as a resume
// without this package would.
func stdlibLoad(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	results := map[string][]json.RawMessage{}
	for sc.Scan() {
		var ev struct {
			Type      string    `json:"type"`
			Path      string    `json:"path"`
			Iteration int       `json:"iteration"`
			Timestamp time.Time `json:"timestamp"`
			Payload   struct {
				Result json.RawMessage `json:"result"`
				Error  string          `json:"error"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return 0, err
		}
		if ev.Type == "step.completed" {
			k := fmt.Sprint(ev.Path, "#", ev.Iteration)
			results[k] = append(results[k], ev.Payload.Result)
		}
	}
	return len(results), sc.Err()
}

func BenchmarkLoad(b *testing.B) {
	path := writeRun(b, 20000) // 100k events
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	benchratio.Run(b, func() {
		r, err := Load(path, Options{})
		if err != nil || len(r.Executions) != 20001 {
			b.Fatalf("load: %v", err)
		}
	}, func() {
		if _, err := stdlibLoad(path); err != nil {
			b.Fatal(err)
		}
	})
}

// Load never panics and never loops, whatever the file holds; what it
// returns is consistent.
func FuzzLoad(f *testing.F) {
	path := writeRun(f, 3)
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add(append(append([]byte{}, seed...), seed...))
	f.Add([]byte(`{"seq":1,"run_id":"x","type":"run.started","path":"","iteration":0,"timestamp":"2026-01-01T00:00:00Z","payload":{"name":"w","kind":"workflow","attempt":2,"input":{"reused":[[5,1],[1,9]]}}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "fuzz.jsonl")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Load(p, Options{Exchange: true})
		if err != nil {
			return
		}
		last := 0
		for _, x := range r.Executions {
			if x.Ordinal <= last || x.Span < 0 || x.Span >= len(r.Spans) {
				t.Fatalf("executions out of order or span: %+v", x)
			}
			last = x.Ordinal
		}
		for _, vs := range r.Visits() {
			for _, v := range vs {
				if len(v.Executions) == 0 {
					t.Fatal("empty visit")
				}
			}
		}
	})
}
