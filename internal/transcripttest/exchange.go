package transcripttest

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
)

// ExchangeID is the run id of WriteExchangeSample's run, fixed so that
// exports of it stay byte-stable for golden files.
const ExchangeID = "6b2171d0-5c3e-4f7a-9d1e-2a4b8c0d9e1f"

// WriteExchangeSample records into dir, with the real Recorder, one run
// holding what the exporters to other formats must carry over: agent steps
// with usage, tool pairs, a dangling tool closed at step end, a command
// step, a for_each loop of agent steps and a failed agent step. It returns
// the transcript's path. Each event is 37 ms after the previous one.
func WriteExchangeSample(t testing.TB, dir string) string {
	t.Helper()
	base := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	n := 0
	now := func() time.Time { n++; return base.Add(time.Duration(n) * 37 * time.Millisecond) }
	// A fixed run id and clock keep exports byte-stable for golden files.
	rec, err := transcript.Create(dir, ExchangeID, transcript.Options{Now: now})
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

// ExchangeSample returns the events of WriteExchangeSample's run, recorded
// into a temporary directory and read back.
func ExchangeSample(t testing.TB) []transcript.ExchangeEvent {
	t.Helper()
	var events []transcript.ExchangeEvent
	for rec, err := range runs.Open(WriteExchangeSample(t, t.TempDir()), runs.Options{}).Events(runs.FullDecode) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, *rec.Event())
	}
	return events
}

// RecordAll records events as they are into a new transcript in dir, with a
// fresh run id, and returns its path.
func RecordAll(t testing.TB, dir string, events []transcript.ExchangeEvent) string {
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

// Verify fails the test unless the transcript at path passes reel verify
// without violations.
func Verify(t testing.TB, path string) {
	t.Helper()
	rep := verify.Paths([]string{path}, verify.Options{})
	if rep.Violations() > 0 || len(rep.Unreadable) > 0 {
		t.Fatalf("imported transcript is invalid: %v %v", rep.Problems, rep.Unreadable)
	}
}

// Exchange is what a conversion round trip must keep: every message with
// its blocks, every tool event, every agent step's token counts.
type Exchange struct {
	Messages []string
	Tools    []string
	Tokens   []string
}

// Summarize lists the exchange of events, with free-form JSON values
// (blocks, tool input and output) rewritten by canonical so that formats
// that reorder keys or respell numbers still compare equal. Tool events are
// sorted, since formats need not keep their order across steps.
func Summarize(t testing.TB, events []transcript.ExchangeEvent, canonical func(raw []byte) ([]byte, error)) Exchange {
	t.Helper()
	var x Exchange
	canon := func(v any) string {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		c, err := canonical(raw)
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

// String renders x as indented JSON, for failure messages.
func (x Exchange) String() string {
	b, _ := json.MarshalIndent(x, "", "  ")
	return string(b)
}

// CheckValid asserts what a reel transcript needs: run.started first and
// run.completed last and nowhere else, steps and tool pairs balanced, time
// never going back, and every event accepted by the strict encoder.
func CheckValid(t testing.TB, events []transcript.ExchangeEvent) {
	t.Helper()
	if len(events) < 2 || events[0].Type != transcript.RunStarted || events[len(events)-1].Type != transcript.RunCompleted {
		t.Fatalf("run lifecycle broken: %d events", len(events))
	}
	open := map[string]int{}
	calls := map[string]int{}
	for i := range events {
		e := events[i]
		e.RunID = "00000000-0000-4000-8000-000000000000"
		e.Seq = uint64(i + 1)
		if _, err := transcript.AppendEvent(nil, &e); err != nil {
			t.Fatalf("event %d (%s) does not encode: %v", i, e.Type, err)
		}
		k := fmt.Sprintf("%s#%d", e.Path, e.Iteration)
		switch e.Type {
		case transcript.RunStarted, transcript.RunCompleted:
			if i != 0 && i != len(events)-1 {
				t.Fatalf("run event in the middle at %d", i)
			}
		case transcript.StepStarted:
			open[k]++
		case transcript.StepCompleted:
			if open[k] == 0 {
				t.Fatalf("event %d: step.completed %s without start", i, k)
			}
			open[k]--
		case transcript.ToolCall:
			calls[e.Tool().CallID]++
		case transcript.ToolResult:
			id := e.Tool().CallID
			if calls[id] == 0 {
				t.Fatalf("event %d: tool.result %s without call", i, id)
			}
			calls[id]--
		}
		if i > 0 && e.Timestamp.Before(events[i-1].Timestamp) {
			t.Fatalf("event %d: timestamp goes back", i)
		}
	}
	for k, n := range open {
		if n != 0 {
			t.Fatalf("step %s left open", k)
		}
	}
	for k, n := range calls {
		if n != 0 {
			t.Fatalf("tool call %s without result", k)
		}
	}
}

// Encode renders events as transcript lines the way the recorder writes
// them, numbered from 1 under a fixed run id, so that imports compare
// byte for byte with golden files.
func Encode(t testing.TB, events []transcript.ExchangeEvent) []byte {
	t.Helper()
	var out []byte
	for i := range events {
		e := events[i]
		e.Seq, e.RunID = uint64(i+1), "00000000-0000-4000-8000-000000000001"
		var err error
		if out, err = transcript.AppendEvent(out, &e); err != nil {
			t.Fatalf("encode event %d (%s): %v", i+1, e.Type, err)
		}
		out = append(out, '\n')
	}
	return out
}
