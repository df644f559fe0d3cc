package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/agentlog"
	"github.com/reelhq/reel/internal/importer"
	"github.com/reelhq/reel/internal/shadowstore"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
)

func TestInteropImportFixtures(t *testing.T) {
	ctx := context.Background()
	fs := testfixtures.Dir(t, "flowstudio-run")
	al := testfixtures.Dir(t, "agentlog")
	out := t.TempDir()
	stdout, stderr, err := runReel(t, ctx, "import", "--from", "flowstudio", "--output", out,
		filepath.Join(fs, "stepwise-build-claude"), filepath.Join(fs, "stepwise-claude-receipts-old"))
	if err != nil {
		t.Fatalf("flowstudio import: %v\n%s", err, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[0], "52 messages") {
		t.Errorf("output %q", stdout)
	}
	stdout, stderr, err = runReel(t, ctx, "import", "--from", "agentlog", "--output", out,
		filepath.Join(al, "demo-baseline.agentlog"), filepath.Join(al, "demo-candidate.agentlog"))
	if err != nil {
		t.Fatalf("agentlog import: %v\n%s", err, stderr)
	}
	if n := strings.Count(stdout, "6 messages, 1 tool calls"); n != 2 {
		t.Errorf("output %q", stdout)
	}
	// Wrong ids: an error naming the record, exit status 1, nothing written.
	before, _ := os.ReadDir(out)
	_, stderr, err = runReel(t, ctx, "import", "--from", "agentlog", "--output", out, filepath.Join(al, "wrong-ids-baseline.agentlog"))
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(stderr, "metadata record sha256:b1000000000000000000000000000000000000000000000000000000000000a1") ||
		!strings.Contains(stderr, "--no-verify-ids") {
		t.Fatalf("wrong ids: err %v, stderr %q", err, stderr)
	}
	if after, _ := os.ReadDir(out); len(after) != len(before) {
		t.Errorf("a failed import left a transcript")
	}
	stdout, _, err = runReel(t, ctx, "import", "--from", "agentlog", "--no-verify-ids", "--json", "--output", out, filepath.Join(al, "wrong-ids-baseline.agentlog"))
	if err != nil {
		t.Fatal(err)
	}
	var runs []importer.Run
	if err := json.Unmarshal([]byte(stdout), &runs); err != nil || len(runs) != 1 || runs[0].Messages != 2 || runs[0].RunID == "" {
		t.Fatalf("json output %q: %v", stdout, err)
	}
	// The invalid receipt is reported and skipped; the run still imports.
	run := t.TempDir()
	bad, err := os.ReadFile(filepath.Join(fs, "invalid-build_receipt.json"))
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(fs, "stepwise-build-claude", "build", "receipts", "docs-doc-writer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"invalid-build_receipt.json": bad, "docs-doc-writer.json": good} {
		p := filepath.Join(run, "build", "receipts", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, err = runReel(t, ctx, "import", "--from", "flowstudio", "--output", out, run)
	if err != nil || !strings.Contains(stderr, "invalid-build_receipt.json: invalid receipt") || !strings.Contains(stdout, "flowstudio") {
		t.Fatalf("invalid receipt: err %v\nstdout %q\nstderr %q", err, stdout, stderr)
	}
	verifyStorage(t, out)
	if rep := verify.Paths([]string{out}, verify.Options{}); len(rep.Files) != 6 {
		t.Errorf("%d transcripts, want 6", len(rep.Files))
	}
}

// interopCounts counts what a round trip must keep across a run and its
// children: messages, tool pairs, tokens.
func interopCounts(t *testing.T, paths ...string) (messages, calls, results int, tokens int64) {
	t.Helper()
	for _, p := range paths {
		events, err := transcript.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			switch e.Type {
			case transcript.MessageUser, transcript.MessageAssistant:
				messages++
			case transcript.ToolCall:
				calls++
			case transcript.ToolResult:
				results++
			case transcript.StepCompleted:
				var ar transcript.AgentResult
				if sp := e.Step(); sp.Kind == transcript.KindAgent && transcript.DecodeResult(sp.Result, &ar) == nil {
					tokens += ar.Usage.TotalTokens
				}
			}
		}
	}
	return
}

func TestInteropExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	storage := sampleStorage(t)
	src := transcript.Dir(storage)
	wantM, wantC, wantR, wantT := interopCounts(t, filepath.Join(src, transcripttest.RootID+".jsonl"), filepath.Join(src, transcripttest.ChildID+".jsonl"))
	if wantM == 0 || wantC == 0 || wantT == 0 {
		t.Fatalf("sample has %d messages, %d calls, %d tokens", wantM, wantC, wantT)
	}

	// agentlog: one trace per run, parent and child.
	alDir := t.TempDir()
	stdout, stderr, err := runReel(t, ctx, "export", transcripttest.RootID[:8], "--to", "agentlog", alDir, "--storage", storage)
	if err != nil {
		t.Fatalf("export agentlog: %v\n%s", err, stderr)
	}
	files := strings.Fields(stdout)
	if len(files) != 2 || !strings.HasSuffix(files[0], transcripttest.RootID+".agentlog") || !strings.HasSuffix(files[1], transcripttest.ChildID+".agentlog") {
		t.Fatalf("export wrote %v", files)
	}
	out := t.TempDir()
	if _, stderr, err := runReel(t, ctx, append([]string{"import", "--from", "agentlog", "--output", out}, files...)...); err != nil {
		t.Fatalf("import agentlog: %v\n%s", err, stderr)
	}
	verifyStorage(t, out)
	imported, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
	m, c, r, tok := interopCounts(t, imported...)
	if m != wantM || c != wantC || r != wantR || tok != wantT {
		t.Errorf("agentlog round trip: messages %d/%d calls %d/%d results %d/%d tokens %d/%d", m, wantM, c, wantC, r, wantR, tok, wantT)
	}

	// flowstudio: one run directory, the child run as a second flow,
	// imported back as a parent and a child run.
	fsDir := filepath.Join(t.TempDir(), "run")
	if _, stderr, err := runReel(t, ctx, "export", filepath.Join(src, transcripttest.RootID+".jsonl"), "--to", "flowstudio", fsDir); err != nil {
		t.Fatalf("export flowstudio: %v\n%s", err, stderr)
	}
	out2 := t.TempDir()
	if _, stderr, err := runReel(t, ctx, "import", "--from", "flowstudio", "--output", out2, fsDir); err != nil {
		t.Fatalf("import flowstudio: %v\n%s", err, stderr)
	}
	verifyStorage(t, out2)
	imported, _ = filepath.Glob(filepath.Join(out2, "*.jsonl"))
	m, c, r, tok = interopCounts(t, imported...)
	if len(imported) != 2 || m != wantM || c != wantC || r != wantR || tok != wantT {
		t.Errorf("flowstudio round trip (%d files): messages %d/%d calls %d/%d results %d/%d tokens %d/%d", len(imported), m, wantM, c, wantC, r, wantR, tok, wantT)
	}
	var spec struct {
		FlowKeys []string `json:"flow_keys"`
	}
	data, err := os.ReadFile(filepath.Join(fsDir, "spec.json"))
	if err != nil || json.Unmarshal(data, &spec) != nil || len(spec.FlowKeys) != 2 {
		t.Errorf("spec.json flows %v (%v)", spec.FlowKeys, err)
	}

	// --store: Shadow's store layout and index.
	project := t.TempDir()
	stdout, stderr, err = runReel(t, ctx, "export", transcripttest.RootID, "--to", "agentlog", "--store", "--json", project, "--storage", storage)
	if err != nil {
		t.Fatalf("export --store: %v\n%s", err, stderr)
	}
	var res exported
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res.Files) != 3 {
		t.Fatalf("--json output %q: %v", stdout, err)
	}
	recs, err := agentlog.ReadFile(res.Files[0], agentlog.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := shadowstore.StorePath(project, recs[0].ID); want != res.Files[0] {
		t.Errorf("stored at %s, want %s", res.Files[0], want)
	}
	db, err := sql.Open("sqlite", shadowstore.IndexPath(project))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM traces t JOIN tags g ON g.trace_id = t.id WHERE g.key = 'reel.run_id' AND g.value IN (?, ?)`,
		transcripttest.RootID, transcripttest.ChildID).Scan(&n); err != nil || n != 2 {
		t.Errorf("index rows %d: %v", n, err)
	}
	// The store's directory imports as a whole.
	out3 := t.TempDir()
	stdout, stderr, err = runReel(t, ctx, "import", "--from", "agentlog", "--output", out3, filepath.Join(project, ".shadow", "traces"))
	if err != nil || strings.Count(stdout, "\n") != 2 {
		t.Fatalf("import store dir: %v\n%s\n%s", err, stdout, stderr)
	}
	verifyStorage(t, out3)
}

func TestInteropExportErrors(t *testing.T) {
	ctx := context.Background()
	storage := sampleStorage(t)
	for _, args := range [][]string{
		{"export", transcripttest.RootID, t.TempDir(), "--storage", storage},
		{"export", transcripttest.RootID, "--to", "csv", t.TempDir(), "--storage", storage},
		{"export", transcripttest.RootID, "--to", "flowstudio", "--store", t.TempDir(), "--storage", storage},
		{"export", "ffffffff", "--to", "agentlog", t.TempDir(), "--storage", storage},
		{"export", transcripttest.RootID, "--to", "agentlog"},
	} {
		if _, _, err := runReel(t, ctx, args...); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
	if _, _, err := runReel(t, ctx, "import", "--from", "flowstudio", "--output", t.TempDir(), t.TempDir()); err == nil {
		t.Error("importing an empty directory as a Flow Studio run succeeded")
	}
}

// TestInteropAutoImport: --from auto hands Flow Studio runs and .agentlog
// files to the interop importers.
func TestInteropAutoImport(t *testing.T) {
	ctx := context.Background()
	out := t.TempDir()
	stdout, stderr, err := runReel(t, ctx, "import", "--output", out,
		filepath.Join(testfixtures.Dir(t, "flowstudio-run"), "stepwise-build-claude"),
		filepath.Join(testfixtures.Dir(t, "agentlog"), "demo-candidate.agentlog"))
	if err != nil {
		t.Fatalf("auto import: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "flowstudio  52 messages") || !strings.Contains(stdout, "agentlog  6 messages, 1 tool calls") {
		t.Errorf("output %q", stdout)
	}
	verifyStorage(t, out)
}

// decodeOneJSON fails the test unless out is exactly one JSON value, an
// array of imported runs.
func decodeOneJSON(t *testing.T, out string) []importer.Run {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var runs []importer.Run
	if err := dec.Decode(&runs); err != nil {
		t.Fatalf("--json output is not one array of runs: %v\n%s", err, out)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("--json printed more than one JSON document (next: %s, %v):\n%s", extra, err, out)
	}
	return runs
}

// TestInteropAutoImportJSONOneDocument: --from auto --json over a mix of
// interop sources, provider recordings and a missing file prints one
// array, in argument order, failures included. testdata/interop/fsrun is a
// small hand-written Flow Studio run in the documented form and
// review.agentlog its import written out by `reel export --to agentlog`
// (content ids and all).
func TestInteropAutoImportJSONOneDocument(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runReel(t, context.Background(), "import", "--json", "--output", out,
		"testdata/interop/fsrun", "testdata/import/stream.jsonl", "testdata/import/nope.jsonl", "testdata/interop/review.agentlog")
	if code, _ := exitStatus(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1 for the missing file\n%s", code, err, stderr)
	}
	runs := decodeOneJSON(t, stdout)
	want := []struct {
		file, format   string
		messages, call int
		failed         bool
	}{
		{"testdata/interop/fsrun", "flowstudio", 2, 1, false},
		{"testdata/import/stream.jsonl", "claude-stream-json", 2, 1, false},
		{"testdata/import/nope.jsonl", "auto", 0, 0, true},
		{"testdata/interop/review.agentlog", "agentlog", 2, 1, false},
	}
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d:\n%s", len(runs), len(want), stdout)
	}
	for i, w := range want {
		r := runs[i]
		if r.File != w.file || r.Format != w.format || r.Messages != w.messages || r.ToolCalls != w.call || (r.Error != "") != w.failed {
			t.Errorf("run %d: %+v, want %+v", i, r, w)
		}
		if !w.failed && (r.RunID == "" || filepath.Dir(r.Transcript) != out) {
			t.Errorf("run %d: run id %q, transcript %q", i, r.RunID, r.Transcript)
		}
	}
	verifyImported(t, out, 3)
}

// TestInteropAutoImportJSONFixtures is the same over recorded fixtures:
// a real Flow Studio run and Shadow trace beside a provider stream.
func TestInteropAutoImportJSONFixtures(t *testing.T) {
	out := t.TempDir()
	fsRun := filepath.Join(testfixtures.Dir(t, "flowstudio-run"), "stepwise-build-claude")
	trace := filepath.Join(testfixtures.Dir(t, "agentlog"), "demo-candidate.agentlog")
	stdout, stderr, err := runReel(t, context.Background(), "import", "--json", "--output", out, fsRun, "testdata/import/stream.jsonl", trace)
	if err != nil {
		t.Fatalf("auto import: %v\n%s", err, stderr)
	}
	runs := decodeOneJSON(t, stdout)
	var got []string
	for _, r := range runs {
		got = append(got, r.Format)
		if r.Error != "" || r.RunID == "" {
			t.Errorf("run %+v", r)
		}
	}
	if strings.Join(got, " ") != "flowstudio claude-stream-json agentlog" || runs[0].Messages != 52 || runs[2].Messages != 6 {
		t.Errorf("runs %+v", runs)
	}
	verifyStorage(t, out)
}

// A Flow Studio run and a Shadow trace imported again are unchanged: same
// run ids, nothing rewritten.
func TestInteropImportAgainUnchanged(t *testing.T) {
	ctx := context.Background()
	fs := filepath.Join(testfixtures.Dir(t, "flowstudio-run"), "stepwise-build-claude")
	al := filepath.Join(testfixtures.Dir(t, "agentlog"), "demo-baseline.agentlog")
	out := t.TempDir()
	var first []importer.Run
	for round := 0; round < 2; round++ {
		stdout, stderr, err := runReel(t, ctx, "import", "--json", "--output", out, fs, al)
		if err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		runs := decodeOneJSON(t, stdout)
		if len(runs) != 2 {
			t.Fatalf("round %d: %d runs", round, len(runs))
		}
		want := "new"
		if round == 1 {
			want = "unchanged"
		}
		for i, r := range runs {
			if string(r.Outcome) != want || round == 1 && r.RunID != first[i].RunID {
				t.Errorf("round %d: %s outcome %s run %s", round, r.File, r.Outcome, r.RunID)
			}
		}
		first = runs
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*.jsonl")); len(m) != 2 {
		t.Errorf("%d transcripts", len(m))
	}
}
