package textview

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

func TestReplayGolden(t *testing.T) {
	root := transcripttest.Sample(t, transcripttest.Variant{})
	cases := []struct {
		name string
		opts Options
	}{
		{"text.txt", Options{}},
		{"thinking-color.txt", Options{Thinking: true, Color: true}},
		{"markdown.md", Options{Format: Markdown}},
		{"step-each_file.txt", Options{Step: "each_file"}},
		{"step-glob.txt", Options{Step: "*.review", MaxLines: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			warnings, err := Replay(context.Background(), &out, runs.Open(root, runs.Options{}), c.opts)
			if err != nil || len(warnings) > 0 {
				t.Fatalf("err %v warnings %q", err, warnings)
			}
			golden.Check(t, filepath.Join("testdata", c.name), out.Bytes())
		})
	}
}

func TestReplayContent(t *testing.T) {
	root := transcripttest.Sample(t, transcripttest.Variant{})
	var out bytes.Buffer
	if _, err := Replay(context.Background(), &out, runs.Open(root, runs.Options{}), Options{}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"prompt › Find the bugs in main.go.",
		"system prompt › You are a careful Go reviewer.",
		"assistant › Found 2 issues",
		"tool call Read (toolu_01, agent_emitted)",
		"$ make deps",
		"exit 2",
		"DANGLING",
		"run fixer",
		"thinking … (1 line folded",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("replay lacks %q", want)
		}
	}
	if strings.Contains(s, "I should use") {
		t.Error("thinking shown without --thinking")
	}
	if strings.Contains(s, "\x1b[") {
		t.Error("colour without Color")
	}
	// Tool calls are shown once, from tool.call, not again from tool_use blocks.
	if n := strings.Count(s, "tool call Read (toolu_01"); n != 1 {
		t.Errorf("toolu_01 shown %d times", n)
	}
}

func TestReplayPaced(t *testing.T) {
	root := transcripttest.Sample(t, transcripttest.Variant{})
	start := time.Now()
	var out bytes.Buffer
	// The sample spans 9.1 s; at 100× that is about 91 ms.
	if _, err := Replay(context.Background(), &out, runs.Open(root, runs.Options{}), Options{Speed: 100}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 80*time.Millisecond || d > 3*time.Second {
		t.Errorf("paced replay took %v, want about 91ms", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Replay(ctx, &bytes.Buffer{}, runs.Open(root, runs.Options{}), Options{Speed: 1}); err != context.DeadlineExceeded {
		t.Errorf("cancelled replay: %v", err)
	}
}

func TestReplayDamaged(t *testing.T) {
	dir := t.TempDir()
	root := transcripttest.WriteSample(t, dir, transcripttest.Variant{Interrupted: true})
	data, _ := os.ReadFile(root)
	esc := `{"seq":99,"run_id":"` + transcripttest.RootID + `","type":"message.assistant","path":"x","iteration":0,"timestamp":"2026-06-08T08:14:42.000000Z","payload":{"role":"assistant","blocks":[{"type":"text","fidelity":"agent_emitted","text":"\u001b[2Jgone\rX"},{"type":"hologram","fidelity":"agent_emitted"}]}}` + "\n"
	os.WriteFile(root, append(append(data, "\x00garbage\n"+esc...), `{"seq":10`...), 0o600)
	var out bytes.Buffer
	warnings, err := Replay(context.Background(), &out, runs.Open(root, runs.Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 3 {
		t.Errorf("warnings %q, want the garbage, the unknown block and the torn line", warnings)
	}
	s := out.String()
	if strings.Contains(s, "\x1b") || strings.Contains(s, "\r") {
		t.Error("control characters from the transcript reach the terminal")
	}
	for _, want := range []string{"run interrupted", "block of unknown type \"hologram\"", "Fix the loop"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q", want)
		}
	}
	if _, err := Replay(context.Background(), &out, runs.Open(filepath.Join(dir, "none.jsonl"), runs.Options{}), Options{}); err == nil {
		t.Error("missing file: no error")
	}
	if _, err := Replay(context.Background(), &out, runs.Open(root, runs.Options{}), Options{Format: "html"}); err == nil {
		t.Error("bad format: no error")
	}
}

func TestReplayUnknownEvent(t *testing.T) {
	dir := t.TempDir()
	r := transcripttest.NewRun(t, dir, transcripttest.RootID, "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow"}})
	r.Close()
	f, _ := os.OpenFile(r.Recorder().Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":2,"run_id":"` + transcripttest.RootID + `","type":"step.teleported","path":"a","iteration":0,"timestamp":"2026-06-08T08:14:42.000000Z","payload":{"x":1}}` + "\n")
	f.Close()
	var out bytes.Buffer
	warnings, err := Replay(context.Background(), &out, runs.Open(r.Recorder().Path(), runs.Options{}), Options{})
	// shown, and named as coming from a newer reel (or another writer)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], `unknown event type "step.teleported"`) || !strings.Contains(out.String(), `unknown type "step.teleported"`) {
		t.Errorf("err %v warnings %q out %s", err, warnings, out.String())
	}
}

// A CLI agent's stream records a tool.call before the message whose
// tool_use issued it; the replay shows the message's text first. With a
// masker, secrets do not reach the output.
func TestReplayTextBeforeItsToolCallsAndMasks(t *testing.T) {
	dir := t.TempDir()
	r := transcripttest.NewRun(t, dir, transcripttest.RootID, "", time.Date(2026, 6, 8, 8, 0, 0, 0, time.UTC))
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "live", Kind: transcript.KindWorkflow}})
	r.Start("fix", 0, transcript.KindAgent, 0)
	r.Event(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "fix", Payload: &transcript.ToolPayload{Name: "Bash", CallID: "toolu_9",
		Input: map[string]any{"command": "curl -H 'Authorization: Bearer abcdefghijklmnop1234'"}, Fidelity: transcript.FidelityAgentEmitted}})
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: "fix", Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "Let me call the API."},
		{Type: transcript.BlockToolUse, Fidelity: transcript.FidelityAgentEmitted, ToolName: "Bash", ToolID: "toolu_9"},
	}}})
	r.Event(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "fix", Payload: &transcript.ToolPayload{Name: "Bash", CallID: "toolu_9",
		Output: "ok", Fidelity: transcript.FidelityAgentEmitted}})
	r.Complete("fix", 0, transcript.KindAgent, 0, "", transcript.AgentResult{Output: "done"})
	r.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "live", Kind: transcript.KindWorkflow,
		Result: transcript.RunResult{Status: "success"}}})
	r.Close()
	for _, masked := range []bool{false, true} {
		var out bytes.Buffer
		opts := Options{}
		if masked {
			opts.Masker = secrets.NewMasker(nil)
		}
		if _, err := Replay(context.Background(), &out, runs.Open(r.Recorder().Path(), runs.Options{}), opts); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		text, call := strings.Index(s, "Let me call the API."), strings.Index(s, "tool call Bash (toolu_9")
		if text < 0 || call < 0 || text > call {
			t.Errorf("text at %d, its tool call at %d:\n%s", text, call, s)
		}
		if leaked := strings.Contains(s, "abcdefghijklmnop1234"); leaked == masked {
			t.Errorf("masked %v, token in output %v", masked, leaked)
		}
	}
}

// MaxLines cuts outputs (a tool's result, a command's), never what was
// said: a reply cut short could end inside its own code fence or table.
func TestReplayMaxLinesCutsOutputsOnly(t *testing.T) {
	dir := t.TempDir()
	r := transcripttest.NewRun(t, dir, transcripttest.RootID, "", time.Date(2026, 6, 8, 8, 0, 0, 0, time.UTC))
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow}})
	r.Start("ask", 0, transcript.KindAgent, 0)
	reply := "Here:\n\n```go\nfunc a() {}\nfunc b() {}\n```\n\nDone."
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageUser, Path: "ask", Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "one\ntwo\nthree\nfour\nfive"},
	}}})
	r.Event(transcript.ExchangeEvent{Type: transcript.MessageAssistant, Path: "ask", Payload: &transcript.MessagePayload{Role: "assistant", Blocks: []transcript.ContentBlock{
		{Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: reply},
	}}})
	r.Event(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "ask", Payload: &transcript.ToolPayload{Name: "Bash", CallID: "toolu_1",
		Output: "l1\nl2\nl3\nl4\nl5", Fidelity: transcript.FidelityAgentEmitted}})
	r.Complete("ask", 0, transcript.KindAgent, 0, "", transcript.AgentResult{Output: "done"})
	r.Close()
	for _, f := range []Format{Text, Markdown} {
		var out bytes.Buffer
		if _, err := Replay(context.Background(), &out, runs.Open(r.Recorder().Path(), runs.Options{}), Options{Format: f, MaxLines: 2}); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if !strings.Contains(s, "five") || !strings.Contains(s, "Done.") || !strings.Contains(s, "func b() {}") {
			t.Errorf("%s: the prompt or the reply was cut:\n%s", f, s)
		}
		if strings.Contains(s, "l5") || !strings.Contains(s, "… 3 more lines") {
			t.Errorf("%s: the tool result was not cut to 2 lines:\n%s", f, s)
		}
	}
}
