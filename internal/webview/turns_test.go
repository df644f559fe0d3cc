package webview

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// The page numbers a conversation step's user messages as reel tree and
// reel replay do; a step of one turn gets no number.
func TestRunPageNumbersTurns(t *testing.T) {
	dir := t.TempDir()
	cli := transcripttest.FakeClaude(t, dir)
	wfPath := filepath.Join(dir, "chat.yaml")
	body := `
name: chat
states:
  initial: once
  once: {type: agent, provider: claude, prompt: Say hello., options: {command: FAKE}, on_success: review}
  review:
    type: agent
    provider: claude
    prompt: Review main.go.
    options: {command: FAKE}
    conversation:
      - "Which of these matters most: {{ .turn.Output }}"
      - Write the fix.
    on_success: done
  done: {type: terminal}
`
	if err := os.WriteFile(wfPath, []byte(strings.ReplaceAll(body, "FAKE", cli)), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &engine.Engine{Storage: filepath.Join(dir, "storage"), ProjectDir: dir}
	wf, err := workflow.Load(wfPath, e.LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.Run(context.Background(), wf, engine.RunOptions{})
	if err != nil || rep.Status != "success" {
		t.Fatalf("run: %v %+v", err, rep)
	}
	run, err := LoadRun(runs.Open(rep.TranscriptPath, runs.Options{}), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, ev := range run.Events {
		if ev.Type == "message.user" {
			titles = append(titles, ev.Path+": "+ev.Title)
		}
	}
	want := []string{"once: user", "review: user · turn 1/3", "review: user · turn 2/3", "review: user · turn 3/3"}
	if !slices.Equal(titles, want) {
		t.Errorf("user messages %q, want %q", titles, want)
	}
}

// What a CLI wrote as a user message takes no turn number on the page:
// the imported session's two requests are turns 1/2 and 2/2, the slash
// command, its output, the caveat, the environment context and the
// compaction summary are shown as what they are.
func TestRunPageNumbersNoNoise(t *testing.T) {
	file := transcripttest.WriteNoisySession(t, t.TempDir())
	run, err := LoadRun(runs.Open(file, runs.Options{}), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, ev := range run.Events {
		if ev.Type == "message.user" {
			titles = append(titles, ev.Title)
		}
	}
	want := []string{"user · turn 1/2", "command /clear", "command stdout", "context: caveat", "context: environment context", "context compacted", "user · turn 2/2"}
	if !slices.Equal(titles, want) {
		t.Errorf("user messages %q, want %q", titles, want)
	}
}

// A reminder Claude Code put inside a prompt is folded as what it is, not
// shown as the user's words (claude-replay's system-tags sample,
// es617/claude-replay, had the page read "Before reminder You are
// helpful After reminder" as one request).
func TestRunPageFoldsRemindersInsideAPrompt(t *testing.T) {
	run := loadSession(t, func(r *transcripttest.Run) {
		r.Event(transcript.ExchangeEvent{Type: transcript.MessageUser, Path: "agent", Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{{
			Type: transcript.BlockText, Fidelity: transcript.FidelityAgentEmitted, Text: "Before reminder\n<system-reminder>You are helpful</system-reminder>\nAfter reminder"}}}})
	})
	var folds, texts []string
	for _, ev := range run.Events {
		if ev.Type != "message.user" {
			continue
		}
		for _, b := range ev.Blocks {
			switch b.Kind {
			case "fold":
				folds = append(folds, b.Label)
			case "text":
				texts = append(texts, b.Text)
			}
		}
	}
	if !slices.Equal(folds, []string{"system reminder"}) || len(texts) != 1 || strings.Contains(texts[0], "helpful") || !strings.Contains(texts[0], "After reminder") {
		t.Errorf("folds %q, texts %q: want the reminder folded, the request shown", folds, texts)
	}
}

// A subagent's report (the output of Claude Code's Task and Agent tools)
// and the plan ExitPlanMode asks to approve are prose in Markdown, read
// as the replies are; other tools' output stays preformatted. (agentcmd's
// full-session-askuserquestion, jnarowski/agentcmd, showed both as raw
// "## …" and "**…**".)
func TestRunPageRendersReportsAndPlans(t *testing.T) {
	run := loadSession(t, func(r *transcripttest.Run) {
		call := func(id, name string, in, out any) {
			r.Event(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "agent", Payload: &transcript.ToolPayload{Name: name, CallID: id, Input: in, Fidelity: transcript.FidelityAgentEmitted}})
			r.Event(transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "agent", Payload: &transcript.ToolPayload{Name: name, CallID: id, Output: out, Fidelity: transcript.FidelityAgentEmitted}})
		}
		call("t1", "Task", map[string]any{"description": "research"}, []any{map[string]any{"type": "text", "text": "## Findings\n\n**Two** options."}})
		call("t2", "ExitPlanMode", map[string]any{"plan": "## Plan\n\n1. Replace the scroll logic"}, "User approved the plan")
		call("t3", "Bash", map[string]any{"command": "cat README.md"}, "## Not rendered")
	})
	kinds := map[string][]string{}
	var walk func(title string, b Block)
	walk = func(title string, b Block) {
		if strings.Contains(b.Text, "## ") {
			kinds[title] = append(kinds[title], b.Kind)
		}
		for _, p := range b.Parts {
			walk(title, p)
		}
	}
	for _, ev := range run.Events {
		for _, e := range []*Event{&ev, ev.Result} {
			if e == nil {
				continue
			}
			for _, b := range e.Blocks {
				walk(e.Title, b)
			}
		}
	}
	want := map[string][]string{"result: Task": {"text"}, "tool call: ExitPlanMode": {"text"}, "result: Bash": {"pre"}}
	for title, k := range want {
		if !slices.Equal(kinds[title], k) {
			t.Errorf("%s: Markdown shown as %q, want %q (all: %v)", title, kinds[title], k, kinds)
		}
	}
}

// loadSession records an imported session of one agent step whose events
// add writes, and loads its run page.
func loadSession(t *testing.T, add func(r *transcripttest.Run)) *Run {
	t.Helper()
	r := transcripttest.NewRun(t, t.TempDir(), transcript.NewRunID(), "", transcripttest.Epoch)
	r.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "app: session", Kind: transcript.KindWorkflow}})
	r.Start("agent", 0, transcript.KindAgent, 0)
	add(r)
	r.Complete("agent", 0, transcript.KindAgent, 0, "", transcript.AgentResult{Provider: "claude"})
	if err := r.Recorder().Close(); err != nil {
		t.Fatal(err)
	}
	run, err := LoadRun(runs.Open(r.Recorder().Path(), runs.Options{}), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return run
}
