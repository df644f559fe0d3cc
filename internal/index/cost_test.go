package index

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// A run whose steps reported only tokens is priced from the index's table,
// added to what the providers reported, as reel stats does; a model no
// table knows leaves the run's cost to what is known; a run with nothing
// known has no cost, not $0; and an open run is priced as it grows.
func TestRunCostPricesTokensOnlySteps(t *testing.T) {
	storage := t.TempDir()
	run := transcripttest.NewRun(t, transcript.Dir(storage), transcript.NewRunID(), "", time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	record := run.Event
	step := func(path string, ar transcript.AgentResult) {
		record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: path, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindAgent}})
		record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: path, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindAgent, Result: ar}})
	}
	record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "priced", Kind: transcript.KindWorkflow}})
	// Unknown everywhere: nothing is known yet.
	step("a", transcript.AgentResult{Model: "acme-large", Usage: transcript.Usage{InputTokens: 1_000_000}})
	ctx := context.Background()
	custom, err := pricing.FromEntries([]pricing.Price{{Model: "acme-large", Input: 2, Output: 10}})
	if err != nil {
		t.Fatal(err)
	}
	cost := func(opts ...Option) *float64 {
		t.Helper()
		ix, err := Open(ctx, storage, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		r, err := ix.Get(ctx, run.Recorder().RunID())
		if err != nil {
			t.Fatal(err)
		}
		return r.CostUSD
	}
	if c := cost(); c != nil {
		t.Fatalf("a run of unpriced steps costs %v, want unknown", *c)
	}
	// 1M input tokens of claude-sonnet-4-5 at $3, its dated id.
	step("b", transcript.AgentResult{Model: "claude-sonnet-4-5-20250929", Usage: transcript.Usage{InputTokens: 1_000_000}})
	reported := 0.25
	step("c", transcript.AgentResult{Model: "claude-sonnet-4-5", Usage: transcript.Usage{InputTokens: 10}, CostUSD: &reported})
	if c := cost(); c == nil || math.Abs(*c-3.25) > 1e-9 {
		t.Fatalf("open run: cost %v, want 3.25", c)
	}
	record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "priced", Kind: transcript.KindWorkflow,
		Result: transcript.RunResult{Status: "success", CostUSD: &reported}}})
	run.Close()
	if c := cost(); c == nil || math.Abs(*c-3.25) > 1e-9 {
		t.Fatalf("ended run: cost %v, want 3.25", c)
	}
	// The project's table prices acme-large: a rebuild reprices the run.
	ix, _, err := Rebuild(ctx, storage, WithPrices(pricing.Default().With(custom)))
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if c := cost(WithPrices(pricing.Default().With(custom))); c == nil || math.Abs(*c-5.25) > 1e-9 {
		t.Fatalf("with the project's table: cost %v, want 5.25", c)
	}
}
