package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/importer"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
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
	// Read whole, the text that introduced a tool call comes before it.
	want := "run.started step.started message.assistant tool.call tool.result message.assistant step.completed run.completed"
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
	var runs []importer.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2 (README.txt is no recording): %s", len(runs), out)
	}
	formats := map[string]importer.Run{}
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
	p := &progress{w: &b}
	p.Begin(4)
	p.Imported(1, &importer.Run{})
	p.End()
	if b.Len() != 0 {
		t.Errorf("drew %q on a non-terminal", b.String())
	}
	// On a terminal, nothing before a second has passed, then a bar.
	p = &progress{w: &b, tty: true, total: 4, start: time.Now()}
	p.Imported(1, &importer.Run{})
	if b.Len() != 0 {
		t.Errorf("drew %q within the first second", b.String())
	}
	p.start = time.Now().Add(-2 * time.Second)
	p.Imported(2, nil) // passed over
	p.End()
	if got := b.String(); !strings.Contains(got, "importing [===============               ] 2/4  1 new, 0 updated, 0 unchanged, 0 failed") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("bar %q", got)
	}
}

func importJSON(t *testing.T, args ...string) ([]importer.Run, string) {
	t.Helper()
	out, errOut, err := runReel(t, context.Background(), append([]string{"import", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	var runs []importer.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	return runs, errOut
}

// Imported runs are named after their project and the session's title or
// first prompt, and name their source in run.started.
func TestImportNamesRunsAndRecordsTheSource(t *testing.T) {
	src := t.TempDir()
	copyTree(t, "testdata/import/sessions", src)
	storage := t.TempDir()
	runs, _ := importJSON(t, "--storage", storage, src)
	names := map[string]string{}
	for _, r := range runs {
		names[r.Format] = r.Name
		events, err := transcript.ReadFile(r.Transcript)
		if err != nil {
			t.Fatal(err)
		}
		sp := events[0].Step()
		if sp.Name != r.Name {
			t.Errorf("run.started name %q, reported %q", sp.Name, r.Name)
		}
		var res struct {
			Import struct {
				Path, Format, SHA256 string
				Size                 int64
			}
		}
		if err := transcript.DecodeResult(sp.Result, &res); err != nil {
			t.Fatal(err)
		}
		abs, _ := filepath.EvalSymlinks(r.File)
		st, _ := os.Stat(r.File)
		if res.Import.Path != abs || res.Import.Format != r.Format || res.Import.Size != st.Size() || len(res.Import.SHA256) != 64 {
			t.Errorf("%s: run.started source %+v", r.File, res.Import)
		}
	}
	// The Claude session log has a summary line (its title) and its cwd;
	// the Codex rollout a cwd and a first prompt.
	if names["claude-session-log"] != "w: Weather check" {
		t.Errorf("claude run named %q", names["claude-session-log"])
	}
	if !strings.HasPrefix(names["codex-rollout"], "w: ") || len(names["codex-rollout"]) > 80 {
		t.Errorf("codex run named %q", names["codex-rollout"])
	}
}

// Importing an unchanged source again does nothing; a source that grew
// replaces its earlier import under the same run id; the summary counts
// both.
func TestImportAgainIsIdempotentAndFollowsGrowth(t *testing.T) {
	src := t.TempDir()
	copyTree(t, "testdata/import/sessions", src)
	storage := t.TempDir()
	first, errOut := importJSON(t, "--storage", storage, src)
	if len(first) != 2 || first[0].Outcome != "new" || first[1].Outcome != "new" {
		t.Fatalf("first import %+v", first)
	}
	_ = errOut
	tdir := transcript.Dir(storage)
	before := map[string]os.FileInfo{}
	paths, _ := filepath.Glob(filepath.Join(tdir, "*.jsonl"))
	for _, p := range paths {
		st, _ := os.Stat(p)
		before[p] = st
	}
	// Again, in text mode: nothing written, nothing printed, a summary.
	out, errOut, err := runReel(t, context.Background(), "import", "--storage", storage, src)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	if out != "" || !strings.Contains(errOut, "reel: import: 2 files: 0 new, 0 updated, 2 unchanged, 0 failed") {
		t.Errorf("second import printed %q, stderr %q", out, errOut)
	}
	after, _ := filepath.Glob(filepath.Join(tdir, "*.jsonl"))
	if len(after) != len(paths) {
		t.Fatalf("%d transcripts after a second import, %d before", len(after), len(paths))
	}
	for _, p := range after {
		st, _ := os.Stat(p)
		if b := before[p]; b == nil || !st.ModTime().Equal(b.ModTime()) || st.Size() != b.Size() {
			t.Errorf("%s was rewritten", p)
		}
	}
	// The session grows: the import is replaced, same run id.
	var claude importer.Run
	for _, r := range first {
		if r.Format == "claude-session-log" {
			claude = r
		}
	}
	f, err := os.OpenFile(claude.File, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"parentUuid":"u9","isSidechain":false,"cwd":"/w","sessionId":"s-2","type":"user","message":{"role":"user","content":"And tomorrow?"},"uuid":"u10","timestamp":"2025-11-01T10:05:00.000Z"}`)
	fmt.Fprintln(f, `{"parentUuid":"u10","isSidechain":false,"sessionId":"s-2","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_z","type":"message","role":"assistant","content":[{"type":"text","text":"Rain."}],"usage":{"input_tokens":4,"output_tokens":2}},"uuid":"u11","timestamp":"2025-11-01T10:05:02.000Z"}`)
	f.Close()
	third, _ := importJSON(t, "--storage", storage, src)
	outcomes := map[string]string{}
	for _, r := range third {
		outcomes[r.Format] = string(r.Outcome)
		if r.Format == "claude-session-log" && (r.RunID != claude.RunID || r.Messages != claude.Messages+2) {
			t.Errorf("grown session: %+v (was %+v)", r, claude)
		}
	}
	if outcomes["claude-session-log"] != "updated" || outcomes["codex-rollout"] != "unchanged" {
		t.Errorf("outcomes %v", outcomes)
	}
	if after, _ := filepath.Glob(filepath.Join(tdir, "*.jsonl")); len(after) != 2 {
		t.Errorf("%d transcripts, want the same 2", len(after))
	}
	if stages, _ := filepath.Glob(filepath.Join(tdir, ".import-*")); len(stages) != 0 {
		t.Errorf("stages left behind: %v", stages)
	}
	verifyImported(t, tdir, 2)
	events, err := transcript.ReadFile(claude.Transcript)
	if err != nil || events[len(events)-3].Message() == nil || events[len(events)-3].Message().Blocks[0].Text != "Rain." {
		t.Errorf("the replaced transcript does not end with the new reply (%v)", err)
	}
}

// --mask-secrets masks what a recording leaked, in the transcript and in
// the run's name.
func TestImportMasksSecrets(t *testing.T) {
	t.Setenv("SHOP_API_KEY", "shop-secret-value-123")
	dir := t.TempDir()
	session := filepath.Join(dir, "leak.jsonl")
	lines := `{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s-9","type":"user","message":{"role":"user","content":"deploy with shop-secret-value-123"},"uuid":"u1","timestamp":"2025-11-01T10:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"sessionId":"s-9","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"msg_a","type":"message","role":"assistant","content":[{"type":"text","text":"Using sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123."}],"usage":{"input_tokens":1,"output_tokens":1}},"uuid":"u2","timestamp":"2025-11-01T10:00:01.000Z"}
`
	if err := os.WriteFile(session, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	runs, _ := importJSON(t, "--mask-secrets", "-o", filepath.Join(dir, "out"), session)
	data, err := os.ReadFile(runs[0].Transcript)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"shop-secret-value-123", "sk-ant-api03"} {
		if strings.Contains(string(data), leak) || strings.Contains(runs[0].Name, leak) {
			t.Errorf("%s left in the import", leak)
		}
	}
	if !strings.Contains(string(data), secrets.Masked) || !strings.Contains(runs[0].Name, secrets.Masked) {
		t.Errorf("nothing masked: name %q", runs[0].Name)
	}
}

// A Codex 0.40 rollout writes each shell call with its output when the call
// ends; imported, the call lasts as long as its output says it ran, in
// `reel tools` and every view that reads call and result times (it showed
// 0 s for every call).
func TestImportCodexRolloutCallDurations(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join("..", "..", "internal", "normalize", "testdata", "recordings", "codex-rollout", "calls-with-outputs.jsonl")
	out, errOut, err := runReel(t, context.Background(), "import", "--from", "codex-rollout", "-o", dir, rec)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	verifyImported(t, dir, 1)
	out, errOut, err = runReel(t, context.Background(), "tools", "--json", strings.Fields(out)[1])
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	var pairs []struct {
		CallID     string `json:"call_id"`
		DurationMS int64  `json:"duration_ms"`
	}
	if err := json.Unmarshal([]byte(out), &pairs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]int64{}
	for _, p := range pairs {
		got[p.CallID] = p.DurationMS
	}
	// call_t2 ran 0.0 s; call_t4 was written 3 s before its output
	want := map[string]int64{"call_t1": 6500, "call_l1": 1200, "call_t2": 0, "call_t4": 3000}
	for id, ms := range want {
		if got[id] != ms {
			t.Errorf("%s lasts %d ms, want %d (all: %v)", id, got[id], ms, got)
		}
	}
}
