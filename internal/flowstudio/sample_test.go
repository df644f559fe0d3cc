package flowstudio

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
)

const sampleRunID = "6b2171d0-5c3e-4f7a-9d1e-2a4b8c0d9e1f"

// writeSample records, with the real Recorder, a run holding agent steps
// with usage, tool pairs, a dangling tool closed at step end, a command
// step, a for_each loop of agent steps, and a failed agent step.
func writeSample(t testing.TB, dir string) string {
	t.Helper()
	base := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	n := 0
	now := func() time.Time { n++; return base.Add(time.Duration(n) * 37 * time.Millisecond) }
	// A fixed run id and clock keep exports byte-stable for golden files.
	rec, err := transcript.Create(dir, sampleRunID, transcript.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	r := func(typ transcript.EventType, path string, iter int, p any) {
		t.Helper()
		if _, err := rec.Record(transcript.ExchangeEvent{Type: typ, Path: path, Iteration: iter, Payload: p}); err != nil {
			t.Fatalf("record %s: %v", typ, err)
		}
	}
	text := func(f transcript.Fidelity, s string) transcript.ContentBlock {
		return transcript.ContentBlock{Type: transcript.BlockText, Fidelity: f, Text: s}
	}
	user := func(path string, iter int, prompt, system string) {
		b := []transcript.ContentBlock{text(transcript.FidelityRouter, prompt)}
		if system != "" {
			b = append(b, text(transcript.FidelityRouter, system))
		}
		r(transcript.MessageUser, path, iter, &transcript.MessagePayload{Role: "user", Blocks: b})
	}
	asst := func(path string, iter int, blocks ...transcript.ContentBlock) {
		r(transcript.MessageAssistant, path, iter, &transcript.MessagePayload{Role: "assistant", Blocks: blocks})
	}
	tool := func(path string, iter int, name, id string, in, out any, errText string) {
		r(transcript.ToolCall, path, iter, &transcript.ToolPayload{Name: name, CallID: id, Input: in, Fidelity: transcript.FidelityAgentEmitted})
		r(transcript.ToolResult, path, iter, &transcript.ToolPayload{Name: name, CallID: id, Output: out, Error: errText, Fidelity: transcript.FidelityAgentEmitted})
	}
	agentDone := func(path string, iter int, name string, in, out int64, errText string) {
		r(transcript.StepCompleted, path, iter, &transcript.StepPayload{Name: name, Kind: transcript.KindAgent, Error: errText, Result: transcript.AgentResult{
			Output: "ok", Provider: "claude", Model: "claude-sonnet-4-5", DurationMS: 1234,
			Usage: transcript.Usage{InputTokens: in, OutputTokens: out, CacheReadTokens: 7, ReasoningTokens: 3, TotalTokens: in + out},
		}})
	}
	r(transcript.RunStarted, "", 0, &transcript.StepPayload{Name: "review", Kind: transcript.KindWorkflow})
	r(transcript.StepStarted, "analyze", 0, &transcript.StepPayload{Name: "analyze", Kind: transcript.KindAgent})
	user("analyze", 0, "Review main.go\nfor bugs.", "You are careful.")
	asst("analyze", 0,
		transcript.ContentBlock{Type: transcript.BlockThinking, Fidelity: transcript.FidelityAgentEmitted, Thinking: "Read it first."},
		text(transcript.FidelityAgentEmitted, "Reading."),
		transcript.ContentBlock{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Read", ToolID: "toolu_1", ToolInput: map[string]any{"file_path": "main.go"}})
	tool("analyze", 0, "Read", "toolu_1", map[string]any{"file_path": "main.go"}, "package main\n\tfunc main() {}\n", "")
	asst("analyze", 0, text(transcript.FidelityAgentEmitted, "Running the tests."),
		transcript.ContentBlock{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Bash", ToolID: "toolu_2", ToolInput: map[string]any{"command": "go test ./..."}})
	r(transcript.ToolCall, "analyze", 0, &transcript.ToolPayload{Name: "Bash", CallID: "toolu_2", Input: map[string]any{"command": "go test ./..."}, Fidelity: transcript.FidelityAgentEmitted})
	asst("analyze", 0, text(transcript.FidelityAgentEmitted, "Found 2 issues."))
	// The dangling Bash call, closed at step end as reel does.
	r(transcript.ToolResult, "analyze", 0, &transcript.ToolPayload{Name: "Bash", CallID: "toolu_2", Error: "no result: step ended", Fidelity: transcript.FidelityAgentEmitted})
	agentDone("analyze", 0, "analyze", 1200, 345, "")
	r(transcript.StepStarted, "lint", 0, &transcript.StepPayload{Name: "lint", Kind: transcript.KindCommand, Command: "go vet ./..."})
	r(transcript.StepCompleted, "lint", 0, &transcript.StepPayload{Name: "lint", Kind: transcript.KindCommand, Result: transcript.CommandResult{ExitCode: 0, Output: "", Stderr: ""}})
	r(transcript.StepStarted, "each_file", 0, &transcript.StepPayload{Name: "each_file", Kind: transcript.KindForEach})
	for i := 0; i < 2; i++ {
		p := "each_file.review"
		r(transcript.StepStarted, p, i, &transcript.StepPayload{Name: "review", Kind: transcript.KindAgent})
		user(p, i, fmt.Sprintf("Review file %d", i), "")
		asst(p, i, text(transcript.FidelityAgentEmitted, fmt.Sprintf("File %d looks fine.", i)),
			transcript.ContentBlock{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Grep", ToolID: fmt.Sprintf("call_%d", i), ToolInput: map[string]any{"pattern": "TODO"}})
		tool(p, i, "Grep", fmt.Sprintf("call_%d", i), map[string]any{"pattern": "TODO"}, map[string]any{"matches": []any{"a.go:3"}}, "")
		agentDone(p, i, "review", int64(100+i), int64(20+i), "")
	}
	r(transcript.StepCompleted, "each_file", 0, &transcript.StepPayload{Name: "each_file", Kind: transcript.KindForEach})
	r(transcript.StepStarted, "fix", 0, &transcript.StepPayload{Name: "fix", Kind: transcript.KindAgent, Attempt: 2})
	user("fix", 0, "Fix them.", "")
	tool("fix", 0, "Edit", "toolu_9", map[string]any{"file_path": "main.go"}, "permission denied", "permission denied")
	// A tool whose input is not an object.
	tool("fix", 0, "Shell", "toolu_10", "ls -la", "a.go\nb.go", "")
	r(transcript.StepCompleted, "fix", 0, &transcript.StepPayload{Name: "fix", Kind: transcript.KindAgent, Attempt: 2, Error: "provider exited with status 1", Result: transcript.AgentResult{
		Provider: "claude", Model: "claude-sonnet-4-5", Usage: transcript.Usage{InputTokens: 50, OutputTokens: 5, TotalTokens: 55}}})
	r(transcript.RunCompleted, "", 0, &transcript.StepPayload{Name: "review", Kind: transcript.KindWorkflow, Error: "step fix failed", Result: transcript.RunResult{Status: "failure", ExitCode: 1}})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return rec.Path()
}

// exchange is what a round trip must keep: every message with its blocks,
// every tool event, every step's token counts.
type exchange struct {
	Messages []string
	Tools    []string
	Tokens   []string
}

func summarize(t *testing.T, events []transcript.ExchangeEvent) exchange {
	t.Helper()
	var x exchange
	canon := func(v any) string {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var norm any
		if err := json.Unmarshal(raw, &norm); err != nil {
			t.Fatal(err)
		}
		c, err := json.Marshal(norm)
		if err != nil {
			t.Fatal(err)
		}
		return string(c)
	}
	for i := range events {
		e := &events[i]
		switch e.Type {
		case transcript.MessageUser, transcript.MessageAssistant:
			x.Messages = append(x.Messages, fmt.Sprintf("%s %s#%d %s", e.Type, e.Path, e.Iteration, canon(e.Message().Blocks)))
		case transcript.ToolCall, transcript.ToolResult:
			tp := e.Tool()
			x.Tools = append(x.Tools, fmt.Sprintf("%s %s#%d %s %s in=%s out=%s err=%q", e.Type, e.Path, e.Iteration, tp.Name, tp.CallID, canon(tp.Input), canon(tp.Output), tp.Error))
		case transcript.StepCompleted:
			var ar transcript.AgentResult
			if sp := e.Step(); sp.Kind == transcript.KindAgent && transcript.DecodeResult(sp.Result, &ar) == nil {
				x.Tokens = append(x.Tokens, fmt.Sprintf("%s#%d %+v", e.Path, e.Iteration, ar.Usage))
			}
		}
	}
	sort.Strings(x.Tools)
	return x
}

func recordAll(t *testing.T, dir string, events []transcript.ExchangeEvent) string {
	t.Helper()
	rec, err := transcript.Create(dir, transcript.NewRunID(), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if _, err := rec.Record(e); err != nil {
			t.Fatalf("record %s: %v", e.Type, err)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return rec.Path()
}

func verifyFile(t *testing.T, path string) {
	t.Helper()
	rep := verify.Paths([]string{path}, verify.Options{})
	if rep.Violations() > 0 || len(rep.Unreadable) > 0 {
		t.Fatalf("imported transcript is invalid: %v %v", rep.Problems, rep.Unreadable)
	}
}

func pretty(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
