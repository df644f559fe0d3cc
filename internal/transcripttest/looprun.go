package transcripttest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// LoopRunID is the run id of the transcript WriteLoopRun writes.
const LoopRunID = "55555555-5555-4555-8555-555555555555"

// WriteLoopRun writes, into dir, a finished run of 5×groups+4 events: a
// for_each whose groups iterations are agent steps holding the benchmark
// mix's events (an assistant message with text and tool_use, the tool.call
// and tool.result of the pair, a priced result). It encodes straight to a
// buffered file rather than through a Recorder, so benchmarks of readers
// can build a 100k-event run in a fraction of a second. It returns the
// file's path.
func WriteLoopRun(tb testing.TB, dir string, groups int) string {
	tb.Helper()
	path := filepath.Join(dir, LoopRunID+".jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	seq := uint64(0)
	var line []byte
	put := func(e transcript.ExchangeEvent) {
		seq++
		e.Seq, e.RunID, e.Timestamp = seq, LoopRunID, Epoch.Add(time.Duration(seq)*time.Millisecond)
		line, err = transcript.AppendEvent(line[:0], &e)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(append(line, '\n'))
	}
	put(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "bench", Kind: transcript.KindWorkflow}})
	put(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "each", Payload: &transcript.StepPayload{Name: "each", Kind: transcript.KindForEach}})
	cost := 0.001
	const p = "each.analyze"
	input := map[string]string{"path": "main.go"}
	for g := 0; g < groups; g++ {
		put(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: p, Iteration: g, Payload: &transcript.StepPayload{Name: "analyze", Kind: transcript.KindAgent}})
		put(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: p, Iteration: g, Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
			{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "Found 2 issues in main.go: the loop at line 12 never terminates and err is shadowed."},
			{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Read", ToolID: "toolu_01", ToolInput: input},
		}}})
		call := fmt.Sprint("toolu_", g)
		put(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: p, Iteration: g, Payload: &transcript.ToolPayload{Name: "Read", CallID: call, Input: input, Fidelity: transcript.FidelityRouter}})
		put(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: p, Iteration: g, Payload: &transcript.ToolPayload{Name: "Read", CallID: call, Input: input, Output: "package main\n\nfunc main() {}\n", Fidelity: transcript.FidelityRouter}})
		put(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: p, Iteration: g, Payload: &transcript.StepPayload{Name: "analyze", Kind: transcript.KindAgent,
			Result: transcript.AgentResult{Output: "ok", Provider: "claude", Model: "claude-sonnet-4-5", Usage: transcript.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}, CostUSD: &cost, SessionID: "s1"}}})
	}
	put(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "each", Payload: &transcript.StepPayload{Name: "each", Kind: transcript.KindForEach}})
	put(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "bench", Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}})
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}
