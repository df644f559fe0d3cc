package importer

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

func TestIdentifyAndIDs(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	testfixtures.WriteFile(t, a, "one\n")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	sa, err := identify(a, "claude-session-log")
	if err != nil {
		t.Fatal(err)
	}
	sl, err := identify(link, "claude-session-log")
	if err != nil {
		t.Fatal(err)
	}
	if sa.Path != sl.Path || sa.RunID() != sl.RunID() || !sa.Same(sl) || sa.Size != 4 || len(sa.SHA256) != 64 {
		t.Errorf("a %+v, its symlink %+v: want the same source", sa, sl)
	}
	if err := transcript.ValidRunID(sa.RunID()); err != nil {
		t.Errorf("run id %s: %v", sa.RunID(), err)
	}
	if c := sa.ChildRunID("x"); c == sa.RunID() || c == sa.ChildRunID("y") || transcript.ValidRunID(c) != nil {
		t.Errorf("child ids %s %s", c, sa.ChildRunID("y"))
	}
	b := filepath.Join(dir, "b.jsonl")
	testfixtures.WriteFile(t, b, "one\n")
	sb, _ := identify(b, "claude-session-log")
	if sb.RunID() == sa.RunID() || !sb.Same(sa) {
		t.Errorf("another path with the same content: %s vs %s", sb.RunID(), sa.RunID())
	}
	// A directory: names and contents of its files, in name order.
	run := filepath.Join(dir, "run")
	testfixtures.WriteFile(t, filepath.Join(run, "meta.json"), "{}")
	testfixtures.WriteFile(t, filepath.Join(run, "flow", "llm", "x.jsonl"), "{}\n")
	d1, err := identify(run, "flowstudio")
	if err != nil || d1.Size != 5 {
		t.Fatalf("%+v %v", d1, err)
	}
	if err := os.Rename(filepath.Join(run, "meta.json"), filepath.Join(run, "spec.json")); err != nil {
		t.Fatal(err)
	}
	if d2, _ := identify(run, "flowstudio"); d2.Same(d1) {
		t.Error("a renamed file left the fingerprint unchanged")
	}
	if _, err := identify(filepath.Join(dir, "missing"), "x"); err == nil {
		t.Error("no error for a missing source")
	}
}

// record writes a transcript for src's run whose run.started names src.
func record(t *testing.T, dir, runID string, src *Source) string {
	t.Helper()
	rec, err := transcript.Create(dir, runID, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp := &transcript.StepPayload{Name: "x", Kind: transcript.KindWorkflow}
	if src != nil {
		sp.Result = src.Result()
	}
	if _, err := rec.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Timestamp: time.Now(), Payload: sp}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return rec.Path()
}

func TestCheckAndStage(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "transcripts")
	file := filepath.Join(dir, "s.jsonl")
	testfixtures.WriteFile(t, file, "v1\n")
	src, _ := identify(file, "codex-rollout")
	if o, prior, err := check(out, src); err != nil || o != New || prior != nil {
		t.Fatalf("first import: %s %v %v", o, prior, err)
	}
	// The first import, with a child run.
	src.ChildRunIDs = []string{src.ChildRunID("c")}
	st, err := newStage(out)
	if err != nil {
		t.Fatal(err)
	}
	p := record(t, st.Dir(), src.RunID(), &src)
	record(t, st.Dir(), src.ChildRunIDs[0], nil)
	if st.Final(p) != filepath.Join(out, src.RunID()+".jsonl") {
		t.Errorf("final path %s", st.Final(p))
	}
	if err := st.Commit(nil, src.ChildRunIDs); err != nil {
		t.Fatal(err)
	}
	if o, prior, err := check(out, src); err != nil || o != Unchanged || prior == nil || len(prior.ChildRunIDs) != 1 {
		t.Errorf("same source again: %s %+v %v", o, prior, err)
	}
	other := src
	other.Format = "codex-exec-json"
	if o, _, _ := check(out, other); o != Updated {
		t.Errorf("another format: %s", o)
	}
	// The source grows: the new import replaces the old and drops the
	// child it no longer has.
	testfixtures.WriteFile(t, file, "v1\nv2\n")
	grown, _ := identify(file, "codex-rollout")
	o, prior, err := check(out, grown)
	if err != nil || o != Updated || prior == nil {
		t.Fatalf("grown source: %s %v %v", o, prior, err)
	}
	st, err = newStage(out)
	if err != nil {
		t.Fatal(err)
	}
	record(t, st.Dir(), grown.RunID(), &grown)
	if err := st.Commit(prior, nil); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != grown.RunID()+".jsonl" {
		t.Errorf("after the update: %v", entries)
	}
	if o, _, _ := check(out, grown); o != Unchanged {
		t.Errorf("after the update: %s", o)
	}
	// An aborted stage leaves nothing behind.
	st, _ = newStage(out)
	record(t, st.Dir(), "77777777-7777-4777-8777-777777777777", nil)
	st.Abort()
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("after an abort: %v", entries)
	}
	// A transcript that records no source is replaced like a changed one.
	plain := filepath.Join(dir, "plain.jsonl")
	testfixtures.WriteFile(t, plain, "x")
	ps, _ := identify(plain, "f")
	record(t, out, ps.RunID(), nil)
	if o, _, _ := check(out, ps); o != Updated {
		t.Errorf("transcript without a source: %s", o)
	}
}
