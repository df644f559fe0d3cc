package transcripttest

import (
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// ProxiedCalls is how many tool invocations WriteProxiedSample's run
// holds, and ProxiedRouterCalls how many of them reel's router served.
const (
	ProxiedCalls       = 3
	ProxiedRouterCalls = 2
)

// WriteProxiedSample records into dir one run whose agent step "edit" ran
// claude through reel's MCP server (mcp_proxy), as reel records it: the
// agent's tool_use blocks of mcp__reel__Write and mcp__reel__Bash in its
// messages, each answered by one router pair under the same id (the Bash
// failing), and one mcp__reel__Bash the agent refused itself before it
// reached reel, its own pair with the agent's error. The step's result
// names the proxy. It returns the transcript's path.
func WriteProxiedSample(t testing.TB, dir string) string {
	t.Helper()
	base := time.Date(2026, 3, 5, 9, 0, 0, 0, time.UTC)
	n := 0
	now := func() time.Time { n++; return base.Add(time.Duration(n) * 41 * time.Millisecond) }
	rec, err := transcript.Create(dir, "0c5e6f3a-8d2b-4e9c-a1f7-3b6d9e2c4a8f", transcript.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	r := func(typ transcript.EventType, path string, p any) {
		t.Helper()
		if _, err := rec.Record(transcript.ExchangeEvent{Type: typ, Path: path, Payload: p}); err != nil {
			t.Fatalf("record %s: %v", typ, err)
		}
	}
	agent := transcript.FidelityAgentEmitted
	use := func(id, name string, in map[string]any) transcript.ContentBlock {
		return transcript.ContentBlock{Type: transcript.BlockToolUse, Fidelity: agent, ToolID: id, ToolName: name, ToolInput: in}
	}
	say := func(blocks ...transcript.ContentBlock) {
		r(transcript.MessageAssistant, "edit", &transcript.MessagePayload{Role: "assistant", Blocks: blocks})
	}
	pair := func(f transcript.Fidelity, id, name string, in map[string]any, out any, errText string) {
		r(transcript.ToolCall, "edit", &transcript.ToolPayload{Name: name, CallID: id, Input: in, Fidelity: f})
		r(transcript.ToolResult, "edit", &transcript.ToolPayload{Name: name, CallID: id, Input: in, Output: out, Error: errText, Fidelity: f})
	}
	write := map[string]any{"file_path": "notes.txt", "content": "one\n"}
	test := map[string]any{"command": "go test ./..."}
	wipe := map[string]any{"command": "rm -rf /"}
	r(transcript.RunStarted, "", &transcript.StepPayload{Name: "proxied", Kind: transcript.KindWorkflow})
	r(transcript.StepStarted, "edit", &transcript.StepPayload{Name: "edit", Kind: transcript.KindAgent})
	r(transcript.MessageUser, "edit", &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "Write notes.txt and run the tests."}}})
	say(transcript.ContentBlock{Type: transcript.BlockText, Fidelity: agent, Text: "Writing it."}, use("toolu_w", "mcp__reel__Write", write))
	pair(transcript.FidelityRouter, "toolu_w", "Write", write, "wrote 4 bytes to notes.txt", "")
	say(use("toolu_b", "mcp__reel__Bash", test))
	pair(transcript.FidelityRouter, "toolu_b", "Bash", test, map[string]any{"output": "FAIL\n", "exit_code": 1}, "Bash: exit status 1")
	say(use("toolu_x", "mcp__reel__Bash", wipe))
	pair(agent, "toolu_x", "mcp__reel__Bash", wipe, nil, "permission denied: mcp__reel__Bash")
	say(transcript.ContentBlock{Type: transcript.BlockText, Fidelity: agent, Text: "notes.txt is written; the tests fail."})
	r(transcript.StepCompleted, "edit", &transcript.StepPayload{Name: "edit", Kind: transcript.KindAgent, Result: transcript.AgentResult{
		Output: "notes.txt is written; the tests fail.", Provider: "claude", Model: "claude-sonnet-4-5", DurationMS: 2100,
		Usage: transcript.Usage{InputTokens: 900, OutputTokens: 80, TotalTokens: 980},
		Proxy: &transcript.ToolProxy{Server: "reel", Tools: map[string]string{
			"mcp__reel__Read": "Read", "mcp__reel__Write": "Write", "mcp__reel__Edit": "Edit",
			"mcp__reel__Bash": "Bash", "mcp__reel__Glob": "Glob", "mcp__reel__Grep": "Grep"}},
	}})
	r(transcript.RunCompleted, "", &transcript.StepPayload{Name: "proxied", Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return rec.Path()
}
