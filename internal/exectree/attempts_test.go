package exectree

import (
	"testing"
	"time"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
)

// A resumed run's tree: the first attempt's open steps interrupted, the
// resume's marked with its attempt, the run's status and time its own.
func TestResumedTree(t *testing.T) {
	r, err := transcript.Create(t.TempDir(), transcript.NewRunID(), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 6, 8, 8, 0, 0, 0, time.UTC)
	at := 0
	rec := func(typ transcript.EventType, path string, p *transcript.StepPayload, gap time.Duration) {
		at += int(gap / time.Millisecond)
		if _, err := r.Record(transcript.ExchangeEvent{Type: typ, Path: path, Payload: p, Timestamp: t0.Add(time.Duration(at) * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	wf := func(attempt int, res any) *transcript.StepPayload {
		return &transcript.StepPayload{Name: "w", Kind: transcript.KindWorkflow, Attempt: attempt, Result: res}
	}
	cmd := func(n string) *transcript.StepPayload {
		return &transcript.StepPayload{Name: n, Kind: transcript.KindCommand}
	}
	rec(transcript.RunStarted, "", wf(0, nil), 0)
	rec(transcript.StepStarted, "a", cmd("a"), 0)
	rec(transcript.StepCompleted, "a", cmd("a"), 100*time.Millisecond)
	rec(transcript.StepStarted, "b", cmd("b"), 0)
	// the process dies here; an hour later it is resumed
	if tree, err := Build(runs.Open(r.Path(), runs.Options{}), Options{}); err != nil || tree.Root.Status != StatusRunning || find(tree.Root, "b").Status != StatusRunning {
		t.Fatalf("while the recorder is open: %v %s", err, tree.Root.Status)
	}
	rec(transcript.RunStarted, "", wf(2, nil), time.Hour)
	rec(transcript.StepStarted, "b", cmd("b"), 0)
	rec(transcript.StepCompleted, "b", cmd("b"), 200*time.Millisecond)
	rec(transcript.RunCompleted, "", wf(2, transcript.RunResult{Status: "success", DurationMS: 350}), 0)
	r.Close()
	tree, err := Build(runs.Open(r.Path(), runs.Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := tree.Root
	if root.Status != StatusSuccess || root.Attempts != 2 || time.Duration(root.Duration) != 350*time.Millisecond || len(root.Children) != 3 {
		t.Fatalf("root %+v", root)
	}
	b1, b2 := root.Children[1], root.Children[2]
	if b1.Status != StatusInterrupted || b1.RunAttempt != 0 || !b1.End.Equal(b1.Start) || b2.Status != StatusSuccess || b2.RunAttempt != 2 {
		t.Fatalf("b: %+v / %+v", b1, b2)
	}
}
