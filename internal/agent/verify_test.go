package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
)

// recordRun records one agent step the way the engine does (run and step
// events around what Run emits) into a real transcript file and checks the
// file with reel's verifier.
func recordRun(t *testing.T, ctx context.Context, req Request) {
	t.Helper()
	storage := t.TempDir()
	runID := transcript.NewRunID()
	rec, err := transcript.Create(transcript.Dir(storage), runID, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	record := func(e transcript.ExchangeEvent) error {
		_, err := rec.Record(e)
		return err
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "wf", Kind: transcript.KindWorkflow}}))
	must(record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "ask", Payload: &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent, Attempt: 1}}))
	res, runErr := Run(ctx, req, func(e transcript.ExchangeEvent) error {
		e.Path = "ask"
		return record(e)
	})
	done := &transcript.StepPayload{Name: "ask", Kind: transcript.KindAgent, Attempt: 1, Result: res}
	status := "success"
	if runErr != nil {
		done.Error, status = runErr.Error(), "failure"
	}
	must(record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "ask", Payload: done}))
	must(record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{
		Name: "wf", Kind: transcript.KindWorkflow, Error: done.Error,
		Result: transcript.RunResult{Status: status, DurationMS: 1},
	}}))
	must(rec.Close())
	report := verify.Paths([]string{rec.Path()}, verify.Options{})
	if report.Violations() > 0 || len(report.Unreadable) > 0 {
		var msgs []string
		for _, p := range append(report.Problems, report.Unreadable...) {
			msgs = append(msgs, p.String())
		}
		t.Errorf("transcript fails verify:\n%s", strings.Join(msgs, "\n"))
	}
}

// Transcripts holding what Run emits pass reel verify, for the HTTP tool
// loop, each CLI provider, a crash mid-stream and a timeout.
func TestTranscriptsPassVerify(t *testing.T) {
	t.Run("openai_compatible", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "input.txt"), []byte("hello world\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		srv := newChatServer(t, readTestdata(t, "read-write-1.sse"), readTestdata(t, "read-write-2.sse"), readTestdata(t, "read-write-3.sse"))
		recordRun(t, context.Background(), openAIRequest(srv.URL, dir, nil))
	})
	for _, p := range []struct{ provider, dir, file string }{
		{"claude", "claude-stream-json", "claude_stream_json_session.jsonl"},
		{"codex", "codex-exec-json", "codex_exec_json_all_formats.jsonl"},
		{"gemini", "gemini-stream-json", "gemini_stream_success.jsonl"},
		{"github_copilot", "copilot-json", "heru_copilot_stream.jsonl"},
	} {
		t.Run(p.provider, func(t *testing.T) {
			req, _ := replayRequest(t, p.provider, filepath.Join(testfixtures.Dir(t, p.dir), p.file))
			recordRun(t, context.Background(), req)
		})
	}
	for _, p := range []struct{ provider, file string }{{"mistral_vibe", "vibe-turn1.jsonl"}, {"opencode", "opencode-turn1.jsonl"}} {
		t.Run(p.provider, func(t *testing.T) {
			req, _ := replayRequest(t, p.provider, cliTestdata(t, p.file))
			recordRun(t, context.Background(), req)
		})
	}
	t.Run("crash", func(t *testing.T) {
		bin := script(t, `head -n 2 "`+cliTestdata(t, "claude-tool-json.jsonl")+`"; printf '\000\377 garbage'; exit 1`)
		recordRun(t, context.Background(), Request{Provider: "claude", Prompt: "p", Options: map[string]any{"command": bin}, Dir: t.TempDir(), Env: baseEnv()})
	})
	t.Run("timeout", func(t *testing.T) {
		bin := script(t, `head -n 2 "`+cliTestdata(t, "claude-tool-json.jsonl")+`"; sleep 300`)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		recordRun(t, ctx, Request{Provider: "claude", Prompt: "p", Options: map[string]any{"command": bin}, Dir: t.TempDir(), Env: baseEnv()})
	})
}
