package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/importer"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

// importUntimed copies the recording at src to dir with the modification
// time mtime, imports it into storage, and returns its run id.
func importUntimed(t *testing.T, storage, dir, src string, mtime time.Time) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dst, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runReel(t, context.Background(), "import", "--storage", storage, "--json", dst)
	var got []importer.Run
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || len(got) != 1 || got[0].RunID == "" {
		t.Fatalf("import %s: %v\n%s%s", src, err, out, errOut)
	}
	return got[0].RunID
}

// checkStampedAt checks that every event of the run's transcript carries
// mtime, that run.started says the run is untimed, and that reel verify
// accepts the file.
func checkStampedAt(t *testing.T, storage, id string, mtime time.Time) {
	t.Helper()
	path := filepath.Join(transcript.Dir(storage), id+".jsonl")
	events, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if !ev.Timestamp.Equal(mtime.Truncate(time.Microsecond)) {
			t.Errorf("%s: %s at %s, want the source's mtime %s", id, ev.Type, ev.Timestamp, mtime)
			break
		}
	}
	if src, ok := importer.Imported(&events[0]); !ok || src == nil || !src.Untimed {
		t.Errorf("%s: run.started's source %+v does not say untimed", id, src)
	}
	if _, errOut, err := runReel(t, context.Background(), "verify", path); err != nil {
		t.Errorf("verify %s: %v\n%s", id, err, errOut)
	}
}

// Issue 24, point 5: a recording that gives its events no time (a
// provider stream, Codex exec JSON) is stamped with its file's mtime and
// marked untimed; every view shows "—" for its start and duration, and
// the run list sorts it by the mtime, not above the real work imported
// before it.
func TestUntimedImportsShowNoStartOrDuration(t *testing.T) {
	storage, src := t.TempDir(), t.TempDir()
	reel := reelIn(t, storage)
	// Real work first: the Claude session of 2025-12-03 with its subagents.
	reel("import", filepath.Join("..", "..", "internal", "importer", "testdata", "subagents"))
	old := time.Date(2020, 1, 2, 3, 4, 5, 678901234, time.UTC)
	later := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sse := importUntimed(t, storage, src, filepath.Join("testdata", "untimed", "reply.sse.jsonl"), old)
	exec := importUntimed(t, storage, src, filepath.Join("testdata", "untimed", "exec.jsonl"), later)
	checkStampedAt(t, storage, sse, old)
	checkStampedAt(t, storage, exec, later)

	// reel runs: newest first by what is known; "—" in the table, no
	// times in JSON.
	var list []map[string]any
	if err := json.Unmarshal([]byte(reel("runs", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range list {
		order = append(order, r["run_id"].(string))
		if id := r["run_id"]; id == sse || id == exec {
			for _, k := range []string{"started", "last_event", "duration_ms"} {
				if v, ok := r[k]; ok {
					t.Errorf("runs --json %s: %s %v, want it absent", id, k, v)
				}
			}
			if r["untimed"] != true {
				t.Errorf("runs --json %s: untimed %v", id, r["untimed"])
			}
		} else if _, ok := r["started"]; !ok {
			t.Errorf("runs --json %s: a timed run without started", id)
		}
	}
	if len(order) != 5 || order[0] != exec || order[4] != sse {
		t.Errorf("runs in the order %v: want %s (mtime 2026) first, %s (mtime 2020) last, below the 2025 session", order, exec, sse)
	}
	table := reel("runs")
	for _, id := range []string{sse, exec} {
		if !regexp.MustCompile(`(?m)^` + id + `\s+import:\S+\s+success\s+—\s+—\s+\d+\s`).MatchString(table) {
			t.Errorf("reel runs: the row of %s lacks — for its start and duration:\n%s", id, table)
		}
	}

	for _, id := range []string{sse, exec} {
		out := reel("status", id)
		if !regexp.MustCompile(`(?m)^status\s+success  in —$`).MatchString(out) || !regexp.MustCompile(`(?m)^started\s+—`).MatchString(out) {
			t.Errorf("reel status %s:\n%s", id, out)
		}
		var st map[string]any
		if err := json.Unmarshal([]byte(reel("status", "--json", id)), &st); err != nil {
			t.Fatal(err)
		}
		if _, ok := st["started"]; ok || st["untimed"] != true || st["duration_ms"] != 0.0 {
			t.Errorf("reel status --json %s: started %v, untimed %v, duration_ms %v", id, st["started"], st["untimed"], st["duration_ms"])
		}

		out = reel("tree", id)
		if first, _, _ := strings.Cut(out, "\n"); !strings.Contains(first, "success  —  ") {
			t.Errorf("reel tree %s: the run's line lacks —:\n%s", id, out)
		}
		var tree struct {
			Run struct {
				Untimed    bool  `json:"untimed"`
				DurationMS int64 `json:"duration_ms"`
			} `json:"run"`
		}
		if err := json.Unmarshal([]byte(reel("tree", "--json", id)), &tree); err != nil || !tree.Run.Untimed || tree.Run.DurationMS != 0 {
			t.Errorf("reel tree --json %s: %+v %v", id, tree.Run, err)
		}

		out = reel("stats", id)
		if !regexp.MustCompile(`(?m)^` + id + `\s+import:\S+\s+success\s+—\s+1\s`).MatchString(out) {
			t.Errorf("reel stats %s: the run's row lacks — for its duration:\n%s", id, out)
		}
		var stats struct {
			Runs []map[string]any `json:"runs"`
		}
		if err := json.Unmarshal([]byte(reel("stats", "--json", id)), &stats); err != nil || len(stats.Runs) != 1 {
			t.Fatalf("stats --json: %v", err)
		}
		if r := stats.Runs[0]; r["untimed"] != true || r["started"] != nil || r["duration_ms"] != 0.0 {
			t.Errorf("reel stats --json %s: %v", id, r)
		}

		out = reel("replay", id)
		if !strings.Contains(out, id+"  —") || !regexp.MustCompile(`━━ run success  —  `).MatchString(out) {
			t.Errorf("reel replay %s: no — for its start and duration:\n%s", id, out)
		}
		file := filepath.Join(t.TempDir(), "run.html")
		reel("replay", "--format", "html", "-o", file, id)
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		checkUntimedPage(t, "replay --format html "+id, string(b))
	}

	get := serveGet(t, storage)
	var page struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal([]byte(get("/api/runs")), &page); err != nil || len(page.Runs) != 5 {
		t.Fatalf("/api/runs: %v, %d runs", err, len(page.Runs))
	}
	if r := page.Runs[4]; r["run_id"] != sse || r["untimed"] != true || r["started"] != nil || r["duration_ms"] != nil {
		t.Errorf("/api/runs: the last run %v, want %s without times", r, sse)
	}
	listPage := get("/")
	for _, id := range []string{sse, exec} {
		checkUntimedPage(t, "/runs/"+id, get("/runs/"+id))
		row := regexp.MustCompile(`(?s)<tr[^>]*>\s*<td><a class="run-link" href="/runs/` + id + `".*?</tr>`).FindString(listPage)
		if !strings.Contains(row, `<td class="untimed" title="the recording gives no times">—</td>`) || !strings.Contains(row, `<td class="num">—</td>`) {
			t.Errorf("run list: the row of %s lacks — for its start and duration:\n%s", id, row)
		}
	}
}

var (
	pageStarted  = regexp.MustCompile(`<dt>started</dt><dd[^>]*>([^<]*)</dd>`)
	pageDuration = regexp.MustCompile(`<dt>duration</dt><dd>([^<]*)</dd>`)
)

func checkUntimedPage(t *testing.T, view, page string) {
	t.Helper()
	if m := pageStarted.FindStringSubmatch(page); m == nil || m[1] != "—" {
		t.Errorf("%s: started %q, want —", view, m)
	}
	if m := pageDuration.FindStringSubmatch(page); m == nil || m[1] != "—" {
		t.Errorf("%s: duration %q, want —", view, m)
	}
}

// The shared recordings without times (Anthropic SSE captures, Codex exec
// JSON) import untimed, at their files' mtimes, and verify; those with
// times do not.
func TestUntimedSharedRecordings(t *testing.T) {
	storage := t.TempDir()
	for _, format := range []string{"anthropic-sse", "codex-exec-json", "claude-session-log"} {
		dir := testfixtures.Dir(t, format)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			info, err := os.Stat(path)
			if err != nil || info.IsDir() {
				continue
			}
			id := importFixture(t, storage, format, e.Name())
			if format == "claude-session-log" {
				events, err := transcript.ReadFile(filepath.Join(transcript.Dir(storage), id+".jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				if src, _ := importer.Imported(&events[0]); src == nil || src.Untimed {
					t.Errorf("%s: a session log with times imported as untimed (%+v)", e.Name(), src)
				}
				continue
			}
			checkStampedAt(t, storage, id, info.ModTime())
		}
	}
}
