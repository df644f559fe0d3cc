package importer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

const streamJSON = `{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5","cwd":"/home/u/shop"}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Check the\nweather with key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"}]}}
{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"sunny"}]}}
{"type":"assistant","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"It is sunny."}]}}
{"type":"result","subtype":"success","is_error":false,"duration_ms":1200,"result":"It is sunny.","usage":{"input_tokens":10,"output_tokens":5}}
`

// One session imported, imported again unchanged, then grown: new,
// unchanged (nothing written), updated (replaced under the same run id),
// each through the one writer, with no stage left behind.
func TestImportSessionAgainAndGrown(t *testing.T) {
	src, out := t.TempDir(), filepath.Join(t.TempDir(), "transcripts")
	file := filepath.Join(src, "s.jsonl")
	if err := os.WriteFile(file, []byte(streamJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	if err := os.Chtimes(file, fixed, fixed); err != nil {
		t.Fatal(err)
	}
	o := Options{Dir: out, Masker: secrets.NewMasker(nil)}
	runs, files, err := Import(context.Background(), []string{file}, o)
	if err != nil || files != 1 || len(runs) != 1 {
		t.Fatalf("import: %d files, %+v, %v", files, runs, err)
	}
	r := runs[0]
	if r.Error != "" || r.Outcome != New || r.Format != string(normalize.ClaudeStreamJSON) || r.Messages != 3 || r.ToolCalls != 1 || r.Status != "success" {
		t.Fatalf("first import: %+v", r)
	}
	if !strings.HasPrefix(r.Name, "shop: Check the weather with key ") || strings.Contains(r.Name, "sk-ant-api03") {
		t.Errorf("name %q: want the project and the prompt on one line, masked", r.Name)
	}
	events, err := transcript.ReadFile(r.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	// A timeless recording takes its file's modification time, every
	// event of it, and says it is untimed.
	for _, ev := range events {
		if !ev.Timestamp.Equal(fixed.Truncate(time.Microsecond)) {
			t.Errorf("%s at %s: want the source's mtime %s", ev.Type, ev.Timestamp, fixed)
		}
	}
	var res struct{ Import Source }
	if err := transcript.DecodeResult(events[0].Step().Result, &res); err != nil || res.Import.Format != string(normalize.ClaudeStreamJSON) ||
		res.Import.Size != int64(len(streamJSON)) || !res.Import.Untimed {
		t.Errorf("run.started's source: %+v %v", res.Import, err)
	}
	if raw, _ := os.ReadFile(r.Transcript); strings.Contains(string(raw), "sk-ant-api03") {
		t.Error("the transcript holds the key unmasked")
	}
	before, _ := os.Stat(r.Transcript)

	runs, _, err = Import(context.Background(), []string{file}, o)
	if err != nil || runs[0].Outcome != Unchanged || runs[0].RunID != r.RunID || runs[0].Transcript != r.Transcript {
		t.Fatalf("again: %+v %v", runs, err)
	}
	if after, _ := os.Stat(r.Transcript); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an unchanged import rewrote the transcript")
	}

	grown := streamJSON + `{"type":"assistant","message":{"id":"msg_3","role":"assistant","content":[{"type":"text","text":"Anything else?"}]}}` + "\n"
	if err := os.WriteFile(file, []byte(grown), 0o600); err != nil {
		t.Fatal(err)
	}
	runs, _, err = Import(context.Background(), []string{file}, o)
	if err != nil || runs[0].Outcome != Updated || runs[0].RunID != r.RunID || runs[0].Messages != 4 {
		t.Fatalf("grown: %+v %v", runs, err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != r.RunID+".jsonl" {
		t.Errorf("transcripts directory after the update: %v", entries)
	}
}

// A directory: recordings imported in order, other files passed over
// silently; an explicit file that is no recording fails with a hint; an
// unknown format is refused before anything is read.
func TestImportDirectoryAndFailures(t *testing.T) {
	src, out := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(src, "a.jsonl"), []byte(streamJSON), 0o600)
	os.WriteFile(filepath.Join(src, "notes.txt"), []byte("just notes\n"), 0o600)
	os.MkdirAll(filepath.Join(src, ".hidden"), 0o700)
	os.WriteFile(filepath.Join(src, ".hidden", "b.jsonl"), []byte(streamJSON), 0o600)
	var p countingProgress
	runs, files, err := Import(context.Background(), []string{src}, Options{Dir: out, Progress: &p})
	if err != nil || files != 1 || len(runs) != 1 || runs[0].Error != "" {
		t.Fatalf("directory: %d files, %+v, %v", files, runs, err)
	}
	if p.begun != 2 || p.imported != 1 || p.passed != 1 || !p.ended {
		t.Errorf("progress %+v: want 2 found, 1 imported, 1 passed over, ended", p)
	}
	runs, _, err = Import(context.Background(), []string{filepath.Join(src, "notes.txt"), filepath.Join(src, "missing.jsonl")}, Options{Dir: out})
	if err != nil || len(runs) != 2 || !strings.Contains(runs[0].Error, "name it with --from") || runs[1].Error == "" {
		t.Errorf("not a recording, and a missing file: %+v %v", runs, err)
	}
	if _, _, err := Import(context.Background(), []string{src}, Options{Dir: out, Format: "no-such-format"}); err == nil {
		t.Error("an unknown format was accepted")
	}
}

type countingProgress struct {
	begun, imported, passed int
	ended                   bool
}

func (p *countingProgress) Begin(total int) { p.begun = total }
func (p *countingProgress) Imported(_ int, r *Run) {
	if r == nil {
		p.passed++
	} else {
		p.imported++
	}
}
func (p *countingProgress) End() { p.ended = true }

func TestRunName(t *testing.T) {
	long := strings.Repeat("word ", 30)
	cases := []struct {
		res    normalize.Result
		path   string
		format normalize.Format
		want   string
	}{
		{normalize.Result{CWD: "/home/u/shop/", Title: "Fix the cart"}, "/x/s.jsonl", normalize.CodexRollout, "shop: Fix the cart"},
		{normalize.Result{Prompt: "first\n  prompt"}, "/x/s.jsonl", normalize.CodexRollout, "first prompt"},
		{normalize.Result{}, "/p/-home-u-shop/s.jsonl", normalize.ClaudeSessionLog, "-home-u-shop: s.jsonl"},
		{normalize.Result{}, "/x/s.jsonl", normalize.CodexRollout, "import:s.jsonl"},
		{normalize.Result{Title: long}, "/x/s.jsonl", normalize.CodexRollout, strings.TrimSpace(long)[:71] + "…"},
		// the request, not the reminders Claude Code put inside it
		{normalize.Result{CWD: "/w/app", Prompt: "Before reminder\n<system-reminder>You are helpful</system-reminder>\nAfter reminder"}, "/x/s.jsonl", normalize.ClaudeSessionLog, "app: Before reminder After reminder"},
	}
	for _, c := range cases {
		if got := runName(&c.res, c.path, c.format); got != c.want {
			t.Errorf("runName(%+v, %s) = %q, want %q", c.res, c.path, got, c.want)
		}
	}
}

// A run starts and ends where the recording says the session did, also
// on lines that give no event: a Gemini session's startTime and
// lastUpdated, a Codex rollout's session_meta and last token count.
func TestImportSpansTheSessionsStatedTimes(t *testing.T) {
	gemini := `{"sessionId":"s","startTime":"2025-10-27T19:55:00.000Z","lastUpdated":"2025-10-27T19:56:10.000Z","messages":[
{"id":"u1","timestamp":"2025-10-27T19:55:59.000Z","type":"user","content":"hi"},
{"id":"g1","timestamp":"2025-10-27T19:56:06.000Z","type":"gemini","content":"hello",
 "thoughts":[{"subject":"Greeting","description":"say hello","timestamp":"2025-10-27T19:56:01.000Z"}],
 "model":"gemini-2.5-pro","tokens":{"input":10,"output":2,"cached":0,"thoughts":1,"tool":0,"total":13}}]}`
	codex := `{"timestamp":"2026-03-10T09:00:00.000Z","type":"session_meta","payload":{"id":"r","cwd":"/w/app"}}
{"timestamp":"2026-03-10T09:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}
{"timestamp":"2026-03-10T09:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}}
{"timestamp":"2026-03-10T09:00:09.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2,"total_tokens":12}}}}
`
	for _, c := range []struct {
		name, data string
		from       normalize.Format
		start, end time.Time
	}{
		{"session.json", gemini, normalize.GeminiSession, time.Date(2025, 10, 27, 19, 55, 0, 0, time.UTC), time.Date(2025, 10, 27, 19, 56, 10, 0, time.UTC)},
		{"rollout.jsonl", codex, normalize.CodexRollout, time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 9, 0, 9, 0, time.UTC)},
	} {
		file := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(file, []byte(c.data), 0o600); err != nil {
			t.Fatal(err)
		}
		o := Options{Dir: filepath.Join(t.TempDir(), "transcripts"), Format: string(c.from), Masker: secrets.NewMasker(nil)}
		runs, _, err := Import(context.Background(), []string{file}, o)
		if err != nil || len(runs) != 1 || runs[0].Error != "" {
			t.Fatalf("%s: %+v %v", c.name, runs, err)
		}
		events, err := transcript.ReadFile(runs[0].Transcript)
		if err != nil {
			t.Fatal(err)
		}
		first, last := events[0], events[len(events)-1]
		if !first.Timestamp.Equal(c.start) || !last.Timestamp.Equal(c.end) {
			t.Errorf("%s: run from %v to %v, want %v to %v", c.name, first.Timestamp, last.Timestamp, c.start, c.end)
		}
		var res transcript.RunResult
		if err := transcript.DecodeResult(last.Step().Result, &res); err != nil || res.DurationMS != c.end.Sub(c.start).Milliseconds() {
			t.Errorf("%s: duration %d ms, want %d (%v)", c.name, res.DurationMS, c.end.Sub(c.start).Milliseconds(), err)
		}
	}
}
