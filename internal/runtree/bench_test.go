package runtree

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// writeLoopRun writes a run whose for_each runs groups iterations of an
// agent step with a message and a tool pair, as the benchmark mix does.
func writeLoopRun(b *testing.B, groups int) string {
	b.Helper()
	id := "55555555-5555-4555-8555-555555555555"
	path := filepath.Join(b.TempDir(), id+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	seq := uint64(0)
	t0 := time.Date(2026, 6, 8, 8, 0, 0, 0, time.UTC)
	var line []byte
	put := func(e transcript.ExchangeEvent) {
		seq++
		e.Seq, e.RunID, e.Timestamp = seq, id, t0.Add(time.Duration(seq)*time.Millisecond)
		line, err = transcript.AppendEvent(line[:0], &e)
		if err != nil {
			b.Fatal(err)
		}
		w.Write(append(line, '\n'))
	}
	put(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "bench", Kind: "workflow"}})
	put(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "each", Payload: &transcript.StepPayload{Name: "each", Kind: transcript.KindForEach}})
	for g := 0; g < groups; g++ {
		step := &transcript.StepPayload{Name: "analyze", Kind: transcript.KindAgent}
		put(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "each.analyze", Iteration: g, Payload: step})
		put(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: "each.analyze", Iteration: g, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "Found 2 issues in main.go: the loop at line 12 never terminates and err is shadowed."},
			{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Read", ToolID: "toolu_01", ToolInput: map[string]string{"path": "main.go"}},
		}}})
		put(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "each.analyze", Iteration: g, Payload: &transcript.ToolPayload{Name: "Read", CallID: fmt.Sprint(g), Input: map[string]string{"path": "main.go"}, Fidelity: transcript.FidelityRouter}})
		put(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "each.analyze", Iteration: g, Payload: &transcript.ToolPayload{Name: "Read", CallID: fmt.Sprint(g), Output: "package main\n\nfunc main() {}\n", Fidelity: transcript.FidelityRouter}})
		cost := 0.001
		step = &transcript.StepPayload{Name: "analyze", Kind: transcript.KindAgent, Result: transcript.AgentResult{Output: "ok", Model: "m", Usage: transcript.Usage{InputTokens: 10, OutputTokens: 5}, CostUSD: &cost}}
		put(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "each.analyze", Iteration: g, Payload: step})
	}
	put(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "each", Payload: &transcript.StepPayload{Name: "each", Kind: transcript.KindForEach}})
	put(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "bench", Kind: "workflow"}})
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

// stdlibScan is the baseline: decode every line with encoding/json, as a
// tree builder without a fast path would.
func stdlibScan(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	steps := 0
	for sc.Scan() {
		var ev struct {
			Type      string          `json:"type"`
			Path      string          `json:"path"`
			Iteration int             `json:"iteration"`
			Timestamp time.Time       `json:"timestamp"`
			Payload   json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return 0, err
		}
		var p map[string]any
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			return 0, err
		}
		if ev.Type == "step.completed" {
			steps++
		}
	}
	return steps, sc.Err()
}

func BenchmarkBuild(b *testing.B) {
	path := writeLoopRun(b, 20000) // 100k events
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	var reel, std time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		tree, err := Build(path, Options{})
		if err != nil || len(tree.Root.Children[0].Children) != 20000 {
			b.Fatalf("build: %v", err)
		}
		t1 := time.Now()
		if _, err := stdlibScan(path); err != nil {
			b.Fatal(err)
		}
		reel += t1.Sub(t0)
		std += time.Since(t1)
	}
	b.ReportMetric(float64(std)/float64(reel), "x-vs-stdlib")
}
