package runs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// A run's family: its events whole, its child run read from beside it;
// with the child's file gone, the run still reads and the warning says
// which child is missing. Count agrees with ReadAll.
func TestReadFamily(t *testing.T) {
	dir := t.TempDir()
	path := transcripttest.WriteSample(t, dir, transcripttest.Variant{})
	want, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	run := runs.Open(path, runs.Options{})
	fam, err := run.ReadFamily()
	if err != nil {
		t.Fatal(err)
	}
	if len(fam.Events) != len(want) || fam.Events[0].Type != transcript.RunStarted {
		t.Fatalf("%d events, the file holds %d", len(fam.Events), len(want))
	}
	if len(fam.Order) != 1 || fam.Order[0] != transcripttest.ChildID || len(fam.Children[transcripttest.ChildID]) == 0 {
		t.Fatalf("children: order %v, %d runs", fam.Order, len(fam.Children))
	}
	if w := run.Warnings().Strings(); len(w) > 0 {
		t.Errorf("warnings reading a whole sample: %v", w)
	}
	events, last, err := runs.Open(path, runs.Options{}).Count()
	if err != nil || events != len(want) || last != want[len(want)-1].Seq {
		t.Errorf("Count: %d events, last seq %d, %v; want %d, %d", events, last, err, len(want), want[len(want)-1].Seq)
	}

	if err := os.Remove(filepath.Join(dir, transcripttest.ChildID+".jsonl")); err != nil {
		t.Fatal(err)
	}
	run = runs.Open(path, runs.Options{})
	fam, err = run.ReadFamily()
	if err != nil {
		t.Fatal(err)
	}
	if len(fam.Order) != 0 || len(fam.Events) != len(want) {
		t.Errorf("without the child's file: order %v, %d events", fam.Order, len(fam.Events))
	}
	if w := strings.Join(run.Warnings().Strings(), "\n"); !strings.Contains(w, transcripttest.ChildID) {
		t.Errorf("warnings do not name the missing child: %q", w)
	}

	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	if _, err := runs.Open(empty, runs.Options{}).ReadAll(); err == nil {
		t.Error("ReadAll of an empty file: no error")
	}
}
