package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/transcript"
)

// indexRows reads the run index directly, without the Sync every reel
// reader runs first, so it shows what the last writer left.
func indexRows(t *testing.T, storage, query string, args ...any) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+index.Path(storage)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestImportUpdatesIndex: reel import brings an existing run index up to
// date as it ends (the imported run and its text are in it before any
// reader syncs), and reel search finds the imported text without reel
// index --rebuild.
func TestImportUpdatesIndex(t *testing.T) {
	dir, storage := t.TempDir(), t.TempDir()
	if r := runBinary(t, dir, "index", "--storage", storage); r.code != 0 {
		t.Fatalf("reel index: %d %s", r.code, r.stderr)
	}
	src, _ := filepath.Abs("testdata/import/stream.jsonl")
	r := runBinary(t, dir, "import", "--from", "claude-stream-json", "--storage", storage, src)
	if r.code != 0 {
		t.Fatalf("reel import: %d %s", r.code, r.stderr)
	}
	runID := strings.Fields(r.stdout)[0]
	if n := indexRows(t, storage, `SELECT count(*) FROM runs WHERE run_id = ? AND imported = 1`, runID); n != 1 {
		t.Fatalf("the index holds %d imported rows for %s after the import", n, runID)
	}
	if n := indexRows(t, storage, `SELECT count(*) FROM fts WHERE fts MATCH 'sunny'`); n == 0 {
		t.Fatal("the imported text is not in the index's full-text table")
	}
	s := runBinary(t, dir, "search", "--storage", storage, "sunny")
	if s.code != 0 || !strings.Contains(s.stdout, runID[:8]) {
		t.Fatalf("reel search sunny (exit %d):\n%s%s", s.code, s.stdout, s.stderr)
	}
}

// writeTimedRun writes a run of workflow wf whose events fall at start,
// start+1m and start+2m.
func writeTimedRun(t *testing.T, storage, wf string, start time.Time) string {
	t.Helper()
	id := transcript.NewRunID()
	rec, err := transcript.Create(transcript.Dir(storage), id, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	for i, ev := range []transcript.ExchangeEvent{
		{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: wf, Kind: transcript.KindWorkflow}},
		{Type: transcript.StepStarted, Path: "s", Payload: &transcript.StepPayload{Name: "s", Kind: transcript.KindCommand, Command: "true"}},
		{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: wf, Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}},
	} {
		ev.Timestamp = start.Add(time.Duration(i) * time.Minute)
		if _, err := rec.Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// TestEventsAll: reel events --all reads the runs the index picks: every
// run in order of start, those active in a --since/--until window, those
// of a --workflow.
func TestEventsAll(t *testing.T) {
	dir, storage := t.TempDir(), t.TempDir()
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	late := writeTimedRun(t, storage, "beta", day.Add(2*time.Hour))
	early := writeTimedRun(t, storage, "alpha", day)
	mid := writeTimedRun(t, storage, "alpha", day.Add(time.Hour))
	ids := func(args ...string) string {
		t.Helper()
		r := runBinary(t, dir, append([]string{"events", "--all", "--storage", storage, "--type", "run.started", "--field", "run_id"}, args...)...)
		if r.code != 0 {
			t.Fatalf("reel events %v: %d %s", args, r.code, r.stderr)
		}
		return strings.Join(strings.Fields(r.stdout), " ")
	}
	if got, want := ids(), strings.Join([]string{early, mid, late}, " "); got != want {
		t.Errorf("--all: %s, want %s (start order)", got, want)
	}
	if got := ids("--workflow", "alpha"); got != early+" "+mid {
		t.Errorf("--workflow alpha: %s, want %s %s", got, early, mid)
	}
	// A window holding mid's run.started only.
	if got := ids("--since", day.Add(59*time.Minute).Format(time.RFC3339), "--until", day.Add(61*time.Minute).Format(time.RFC3339)); got != mid {
		t.Errorf("window: %s, want %s", got, mid)
	}
	// A window inside early's span but after its run.started: the run is
	// read (its later events fall in the window) and yields no run.started.
	r := runBinary(t, dir, "events", "--all", "--storage", storage, "--since", day.Add(90*time.Second).Format(time.RFC3339), "--until", day.Add(3*time.Minute).Format(time.RFC3339), "--field", "type")
	if got := strings.Join(strings.Fields(r.stdout), " "); r.code != 0 || got != "run.completed" {
		t.Errorf("window in early's span: %q (exit %d, %s)", got, r.code, r.stderr)
	}
	if r := runBinary(t, dir, "events", "--all", "--storage", storage, early[:8]); r.code != 2 {
		t.Errorf("--all with a run: exit %d, want 2", r.code)
	}
	if r := runBinary(t, dir, "events", "--storage", storage, "--workflow", "alpha", early[:8]); r.code != 2 {
		t.Errorf("--workflow without --all: exit %d, want 2", r.code)
	}
}
