package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/transcript"
)

// recordRuns records n finished top-level runs of workflow name in storage,
// a minute apart from base (the newest last), each with one child run.
func recordRuns(t testing.TB, storage, name string, base time.Time, n int) []string {
	t.Helper()
	dir := transcript.Dir(storage)
	var ids []string
	for i := range n {
		at := base.Add(time.Duration(i) * time.Minute)
		id := transcript.NewRunID()
		record := func(id, parent, wf string) {
			rec, err := transcript.Create(dir, id, transcript.Options{ParentRunID: parent, Now: func() time.Time { return at }})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range []transcript.ExchangeEvent{
				{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: wf, Kind: transcript.KindWorkflow}},
				{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: wf, Kind: transcript.KindWorkflow, Result: transcript.RunResult{Status: "success"}}},
			} {
				if _, err := rec.Record(e); err != nil {
					t.Fatal(err)
				}
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
		}
		record(id, "", name)
		record(transcript.NewRunID(), id, name+"-child")
		ids = append(ids, id)
	}
	return ids
}

var jan1 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// completedIDs runs completion for status in-process and returns the run
// ids offered, in order.
func completedIDs(t testing.TB, storage, prefix string) []string {
	t.Helper()
	out, errOut, err := runReel(t, context.Background(), "__complete", "status", "--storage", storage, prefix)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	var ids []string
	for _, l := range strings.Split(out, "\n") {
		if id, _, ok := strings.Cut(l, "\t"); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// Run ids complete the same, newest first and top-level only, with or
// without the run index; with one, a run written after the index was built
// is offered too (the index catches up), and a planted symlink at the
// index is not followed.
func TestCompleteRunIDsFromTheIndex(t *testing.T) {
	storage := t.TempDir()
	ids := recordRuns(t, storage, "w", jan1, 30)
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)

	scanned := completedIDs(t, storage, "")
	if !slices.Equal(scanned, newestFirst) {
		t.Fatalf("without an index: %v\nwant %v", scanned, newestFirst)
	}
	if _, err := os.Stat(index.Path(storage)); err == nil {
		t.Fatal("completion built an index")
	}
	if _, _, err := runReel(t, context.Background(), "runs", "--storage", storage); err != nil {
		t.Fatal(err)
	}
	if got := completedIDs(t, storage, ""); !slices.Equal(got, newestFirst) {
		t.Fatalf("from the index: %v\nwant %v", got, newestFirst)
	}
	more := recordRuns(t, storage, "w", jan1.Add(-time.Hour), 1)
	if got := completedIDs(t, storage, ""); len(got) != 31 || got[30] != more[0] {
		t.Fatalf("a run written after the index: %v", got)
	}
	if got := completedIDs(t, storage, ids[3][:8]); !slices.Contains(got, ids[3]) || len(got) > 2 {
		t.Fatalf("prefix %s: %v", ids[3][:8], got)
	}

	// A symlink at the index: completion falls back to the transcripts
	// and the link's target is untouched.
	other := filepath.Join(t.TempDir(), "other.db")
	if err := os.WriteFile(other, []byte("not yours"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range index.Files(storage) {
		os.Remove(f)
	}
	if err := os.Symlink(other, index.Path(storage)); err != nil {
		t.Fatal(err)
	}
	if got := completedIDs(t, storage, ""); len(got) != 31 {
		t.Fatalf("with a symlinked index: %d ids", len(got))
	}
	// Every reader of the index refuses it, and says what to do.
	for _, args := range [][]string{{"runs"}, {"search", "x"}, {"index"}} {
		_, _, err := runReel(t, context.Background(), append(args, "--storage", storage)...)
		if err == nil || !strings.Contains(err.Error(), "not a regular file (a symlink)") || !strings.Contains(err.Error(), "remove it") {
			t.Errorf("%v with a symlinked index: %v", args, err)
		}
	}
	if b, _ := os.ReadFile(other); string(b) != "not yours" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
	if st, _ := os.Stat(other); st.Mode().Perm() != 0o644 {
		t.Fatalf("the symlink's target's mode changed: %v", st.Mode())
	}
}

// BenchmarkCompleteRunIDs completes run ids over 1,000 runs (2,000
// transcripts with their children), from the index and from the
// transcripts, beside the least any listing costs: os.ReadDir of the
// transcripts directory.
func BenchmarkCompleteRunIDs(b *testing.B) {
	storage := b.TempDir()
	recordRuns(b, storage, "w", jan1, 1000)
	dir := transcript.Dir(storage)
	ctx := context.Background()
	var base time.Duration
	b.Run("readdir", func(b *testing.B) {
		for b.Loop() {
			if _, err := os.ReadDir(dir); err != nil {
				b.Fatal(err)
			}
		}
		base = b.Elapsed() / time.Duration(b.N)
	})
	report := func(b *testing.B) {
		if base > 0 {
			b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/float64(base), "x_readdir")
		}
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if runs, err := scannedRuns(storage); err != nil || len(runs) != 2000 {
				b.Fatal(err, len(runs))
			}
		}
		report(b)
	})
	ix, err := index.Open(ctx, storage)
	if err != nil {
		b.Fatal(err)
	}
	ix.Close()
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			if runs, err := indexedRuns(ctx, storage, pricing.Default()); err != nil || len(runs) != 2000 {
				b.Fatal(err, len(runs))
			}
		}
		report(b)
	})
}
