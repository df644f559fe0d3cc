package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
)

// verifyDir checks every transcript in dir with reel's verifier.
func verifyImported(t *testing.T, dir string, want int) []string {
	t.Helper()
	rep := verify.Paths([]string{dir}, verify.Options{})
	for _, p := range rep.Problems {
		t.Errorf("verify: %s", p)
	}
	if len(rep.Files) != want {
		t.Errorf("verify saw %d transcripts, want %d", len(rep.Files), want)
	}
	var files []string
	for _, f := range rep.Files {
		files = append(files, f.File)
	}
	return files
}

func TestImportFileWithExplicitFormat(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := runReel(t, context.Background(), "import", "--from", "claude-stream-json", "-o", dir, "testdata/import/stream.jsonl")
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	fields := strings.Fields(out)
	if len(fields) < 3 || fields[2] != "claude-stream-json" || !strings.Contains(out, "2 messages, 1 tool calls") {
		t.Fatalf("output %q", out)
	}
	runID, path := fields[0], fields[1]
	if err := transcript.ValidRunID(runID); err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != runID+".jsonl" || filepath.Dir(path) != dir {
		t.Errorf("transcript path %s, want %s/%s.jsonl", path, dir, runID)
	}
	verifyImported(t, dir, 1)

	events, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range events {
		types = append(types, string(ev.Type))
		if ev.RunID != runID {
			t.Errorf("run_id %s in %s", ev.RunID, runID)
		}
	}
	want := "run.started step.started tool.call message.assistant tool.result message.assistant step.completed run.completed"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	start := events[0].Step()
	if start.Name != "import:stream.jsonl" || start.Kind != transcript.KindWorkflow {
		t.Errorf("run.started payload %+v", start)
	}
	var ar transcript.AgentResult
	if err := transcript.DecodeResult(events[len(events)-2].Step().Result, &ar); err != nil {
		t.Fatal(err)
	}
	if ar.Output != "It is sunny in Paris." || ar.Usage.InputTokens != 10 || ar.Usage.OutputTokens != 5 || ar.Provider != "claude" {
		t.Errorf("agent result %+v", ar)
	}
	var rr transcript.RunResult
	if err := transcript.DecodeResult(events[len(events)-1].Step().Result, &rr); err != nil {
		t.Fatal(err)
	}
	if rr.Status != "success" || rr.Usage.TotalTokens != 15 {
		t.Errorf("run result %+v", rr)
	}
	for _, ev := range events[2 : len(events)-2] {
		if ev.Path != "agent" {
			t.Errorf("%s has path %q, want agent", ev.Type, ev.Path)
		}
	}
}

func TestImportDirectoryAutoJSON(t *testing.T) {
	storage := t.TempDir()
	out, errOut, err := runReel(t, context.Background(), "import", "--storage", storage, "--json", "testdata/import/sessions")
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	var runs []importedRun
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2 (README.txt is no recording): %s", len(runs), out)
	}
	formats := map[string]importedRun{}
	for _, r := range runs {
		formats[r.Format] = r
		if filepath.Dir(r.Transcript) != transcript.Dir(storage) {
			t.Errorf("transcript %s not under %s", r.Transcript, transcript.Dir(storage))
		}
	}
	claude, codex := formats["claude-session-log"], formats["codex-rollout"]
	if claude.Messages != 5 || claude.ToolCalls != 1 || claude.Skipped["sidechain line"] != 1 {
		t.Errorf("claude session: %+v", claude)
	}
	if codex.ToolCalls != 2 || codex.Skipped["unknown event type"] != 1 {
		t.Errorf("codex rollout: %+v", codex)
	}
	verifyImported(t, transcript.Dir(storage), 2)

	// The session log's prompt and provider times are in the transcript.
	events, err := transcript.ReadFile(claude.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	user := events[2]
	if user.Type != transcript.MessageUser || user.Message().Blocks[0].Text != "What's the weather in Paris?" {
		t.Errorf("third event %s %+v, want the prompt", user.Type, user.Payload)
	}
	if got := events[0].Timestamp.Format("2006-01-02T15:04:05"); got != "2025-11-01T10:00:00" {
		t.Errorf("run.started at %s, want the session's first time", got)
	}
}

func TestImportFailures(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name     string
		args     []string
		code     int
		stderr   string
		produced int
	}{
		{"missing file", []string{"import", "-o", dir, "testdata/import/nope.jsonl"}, 1, "no such file", 0},
		{"garbage", []string{"import", "--from", "codex-exec-json", "-o", dir, "testdata/import/garbage.jsonl"}, 1,
			"no codex-exec-json content found (skipped: non-JSON line ×2)", 0},
		{"undetectable", []string{"import", "-o", dir, "testdata/import/garbage.jsonl"}, 1, "cannot detect the format", 0},
		{"unknown format", []string{"import", "--from", "claude", "-o", dir, "testdata/import/stream.jsonl"}, 2, `unknown format "claude"`, 0},
		{"good and bad", []string{"import", "-o", dir, "testdata/import/garbage.jsonl", "testdata/import/stream.jsonl"}, 1, "garbage.jsonl", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			out, errOut, err := runReel(t, context.Background(), c.args...)
			code, msg := exitStatus(err)
			if code != c.code || !strings.Contains(errOut+msg, c.stderr) {
				t.Errorf("exit %d, stderr %q, message %q; want %d and %q", code, errOut, msg, c.code, c.stderr)
			}
			after, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			if len(after)-len(before) != c.produced {
				t.Errorf("%d transcripts written, want %d (stdout %q)", len(after)-len(before), c.produced, out)
			}
		})
	}
}

func TestImportRespectsReelStorage(t *testing.T) {
	storage := t.TempDir()
	t.Setenv("REEL_STORAGE", storage)
	if _, errOut, err := runReel(t, context.Background(), "import", "testdata/import/stream.jsonl"); err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	if m, _ := filepath.Glob(filepath.Join(transcript.Dir(storage), "*.jsonl")); len(m) != 1 {
		t.Errorf("transcripts in $REEL_STORAGE: %v", m)
	}
	if _, err := os.Stat(".reel"); err == nil {
		t.Error("wrote into ./.reel despite REEL_STORAGE")
	}
}

func TestImportProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, 4)
	p.set(1)
	p.done()
	if b.Len() != 0 {
		t.Errorf("drew %q on a non-terminal", b.String())
	}
	// On a terminal, nothing before a second has passed, then a bar.
	p = &progress{w: &b, tty: true, total: 4, start: time.Now()}
	p.set(1)
	if b.Len() != 0 {
		t.Errorf("drew %q within the first second", b.String())
	}
	p.start = time.Now().Add(-2 * time.Second)
	p.set(2)
	p.done()
	if got := b.String(); !strings.Contains(got, "importing [===============               ] 2/4") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("bar %q", got)
	}
}
