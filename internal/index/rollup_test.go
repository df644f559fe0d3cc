package index

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

const (
	famRoot  = "0199f1f0-0000-4000-8000-000000000001"
	famChild = "0199f1f0-0000-4000-8000-000000000002"
	famGrand = "0199f1f0-0000-4000-8000-000000000003"
)

// family writes a run whose providers reported costs, with a sub-workflow
// whose agent reported only tokens (priced from the table) and which calls
// a sub-workflow of its own with a model no table prices. The root's
// run.completed records the reported cost alone, as the engine does. The
// child is left open (no run.completed) when open is set. It returns the
// child's run so that a test can grow it.
func family(t *testing.T, dir string, open bool) *transcripttest.Run {
	t.Helper()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	wf := func(name string, result any) *transcript.StepPayload {
		return &transcript.StepPayload{Name: name, Kind: transcript.KindWorkflow, Result: result}
	}
	agent := func(r *transcripttest.Run, path, model string, u transcript.Usage, cost *float64) {
		r.Start(path, 0, transcript.KindAgent, 0)
		r.Complete(path, 0, transcript.KindAgent, 0, "", transcript.AgentResult{Provider: "p", Model: model, Usage: u, CostUSD: cost})
	}
	call := func(r *transcripttest.Run, path, child string) {
		r.Start(path, 0, transcript.KindCallWorkflow, 0)
		r.Event(transcript.ExchangeEvent{Type: transcript.CallWorkflowStarted, Path: path, ChildRunID: child,
			Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindCallWorkflow}})
	}
	reported := 0.5
	root := transcripttest.NewRun(t, dir, famRoot, "", start)
	root.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: wf("root", nil)})
	agent(root, "plan", "gpt-5", transcript.Usage{InputTokens: 100, TotalTokens: 100}, &reported)
	call(root, "sub", famChild)

	child := transcripttest.NewRun(t, dir, famChild, famRoot, root.Now())
	child.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: wf("child", nil)})
	agent(child, "work", "claude-sonnet-4-5", transcript.Usage{InputTokens: 1_000_000, TotalTokens: 1_000_000}, nil)
	call(child, "deeper", famGrand)

	grand := transcripttest.NewRun(t, dir, famGrand, famChild, child.Now())
	grand.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: wf("grand", nil)})
	agent(grand, "odd", "acme-unlisted-1", transcript.Usage{InputTokens: 10, TotalTokens: 10}, nil)
	grand.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: wf("grand",
		transcript.RunResult{Status: "success", DurationMS: 10, Usage: transcript.Usage{InputTokens: 10, TotalTokens: 10}})})
	grand.Close()
	child.Complete("deeper", 0, transcript.KindCallWorkflow, 0, "", nil)
	if open {
		root.Close()
		return child
	}
	child.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: wf("child",
		transcript.RunResult{Status: "success", DurationMS: 10, Usage: transcript.Usage{InputTokens: 1_000_010, TotalTokens: 1_000_010}})})
	child.Close()
	root.Complete("sub", 0, transcript.KindCallWorkflow, 0, "", nil)
	root.Event(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: wf("root",
		transcript.RunResult{Status: "success", DurationMS: 10, Usage: transcript.Usage{InputTokens: 1_000_110, TotalTokens: 1_000_110}, CostUSD: &reported})})
	root.Close()
	return nil
}

// treeFigures is what reel tree says run id used and cost.
func treeFigures(t *testing.T, dir, id string) (pricing.Total, int64) {
	t.Helper()
	tree, err := exectree.Build(runs.Open(filepath.Join(dir, id+".jsonl"), runs.Options{}), exectree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tree.Root.Cost(), tree.Root.Usage.TotalTokens
}

// checkFamily compares every row of the family with reel tree's figures.
func checkFamily(t *testing.T, ix *Index, dir, when string) {
	t.Helper()
	for _, id := range []string{famRoot, famChild, famGrand} {
		r, err := ix.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		want, tokens := treeFigures(t, dir, id)
		got := r.Cost()
		if got.String() != want.String() || got.Known && math.Abs(got.USD-want.USD) > 1e-9 || r.Tokens != tokens {
			t.Errorf("%s: run %s: index %s (%v) %d tokens, tree %s (%v) %d tokens", when, id, got, got.USD, r.Tokens, want, want.USD, tokens)
		}
	}
}

// A run's row shows its child runs' costs as reel tree does, whatever the
// order the index met the transcripts in: the parent first, the children
// first, a rebuild, a child still growing, a child's transcript removed.
func TestRowsCountChildRuns(t *testing.T) {
	ctx := context.Background()
	for _, order := range [][]string{{famRoot, famChild, famGrand}, {famGrand, famChild, famRoot}, {famChild, famRoot, famGrand}} {
		storage := t.TempDir()
		dir := transcript.Dir(storage)
		family(t, dir, false)
		ix, err := open(storage, nil)
		if err != nil {
			t.Fatal(err)
		}
		name := "indexed in the order " + order[0][len(order[0])-1:] + order[1][len(order[1])-1:] + order[2][len(order[2])-1:]
		for _, id := range order {
			if _, err := ix.Update(ctx, ix.file(id)); err != nil {
				t.Fatal(err)
			}
		}
		checkFamily(t, ix, dir, name+", one update each")
		ix.Close()
		// All in one update: one transaction, the parents worked out
		// once at its end.
		if err := os.Remove(Path(storage)); err != nil {
			t.Fatal(err)
		}
		if ix, err = open(storage, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Update(ctx, ix.file(order[0]), ix.file(order[1]), ix.file(order[2])); err != nil {
			t.Fatal(err)
		}
		checkFamily(t, ix, dir, name+", one update")
		ix.Close()
	}

	// $0.50 reported + 1M sonnet input tokens at $3 + the unpriced grandchild.
	storage := t.TempDir()
	dir := transcript.Dir(storage)
	family(t, dir, false)
	ix, _, err := Rebuild(ctx, storage)
	if err != nil {
		t.Fatal(err)
	}
	checkFamily(t, ix, dir, "rebuilt")
	if r, _ := ix.Get(ctx, famRoot); r.Cost().String() != "$3.5000+" || r.Tokens != 1_000_110 {
		t.Errorf("root: %s, %d tokens; want $3.5000+ (the grandchild's model has no price), 1000110 tokens", r.Cost(), r.Tokens)
	}
	// reel runs --stats: the children are in their parent's figures.
	all, err := ix.ListAll(ctx, Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tally := TallyRuns(all); tally.Cost().String() != "$3.5000+" || tally.Tokens != 1_000_110 {
		t.Errorf("tally of the family: %s, %d tokens; want the root's", tally.Cost(), tally.Tokens)
	}
	// The grandchild's transcript goes: the rows above it no longer count it.
	if err := os.Remove(ix.file(famGrand)); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if r, _ := ix.Get(ctx, famRoot); r.Cost().String() != "$3.5000" {
		t.Errorf("root without the grandchild: %s, want $3.5000", r.Cost())
	}
	ix.Close()

	// A child still running: the root grows with it.
	storage = t.TempDir()
	dir = transcript.Dir(storage)
	child := family(t, dir, true)
	ix = openIndex(t, storage)
	checkFamily(t, ix, dir, "child open")
	child.Start("more", 0, transcript.KindAgent, 0)
	child.Complete("more", 0, transcript.KindAgent, 0, "", transcript.AgentResult{Model: "claude-sonnet-4-5", Usage: transcript.Usage{OutputTokens: 100_000, TotalTokens: 100_000}})
	child.Recorder().Sync()
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	checkFamily(t, ix, dir, "child grown")
	if r, _ := ix.Get(ctx, famRoot); r.Cost().String() != "$5.0000+" {
		t.Errorf("root with its grown child: %s, want $5.0000+ ($0.50 + $3 + 100k output tokens at $15/M)", r.Cost())
	}
	child.Close()
}
