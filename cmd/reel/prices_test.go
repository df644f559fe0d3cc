package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/otlptest"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// A Codex session reports no cost: stats prices it from the table, shows —
// for a model the table does not know, and the project's prices key
// supplies the price; config show lists it.
func TestStatsPricesFromTheProjectTable(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".reel"), 0o755); err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(dir, "rollout.jsonl")
	writeFile(t, rollout, `{"timestamp":"2026-11-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199aaaa-0000-7000-8000-000000000001","cwd":"/home/dev/shop"}}
{"timestamp":"2026-11-01T10:00:00.100Z","type":"turn_context","payload":{"cwd":"/home/dev/shop","model":"gpt-5.6-luna"}}
{"timestamp":"2026-11-01T10:00:00.200Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Why does CI fail?"}]}}
{"timestamp":"2026-11-01T10:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"The tax is missing."}]}}
{"timestamp":"2026-11-01T10:00:02.100Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000000,"cached_input_tokens":400000,"output_tokens":100000,"reasoning_output_tokens":20000,"total_tokens":1100000}}}}
`, 0o644)
	if res := runBinary(t, dir, "import", rollout); res.code != 0 {
		t.Fatalf("import: %+v", res)
	}
	res := runBinary(t, dir, "stats")
	if res.code != 0 || !strings.Contains(res.stdout, "cost    —\n") || !strings.Contains(res.stdout, "1 agent steps used models without a known price") ||
		strings.Contains(res.stdout, "$0.0000") {
		t.Fatalf("stats without a price:\n%s%s", res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "input 1000000  output 100000  cache read 400000  cache write 0  reasoning 20000") {
		t.Errorf("token line:\n%s", res.stdout)
	}
	writeFile(t, filepath.Join(dir, ".reel", "config.yaml"), "prices:\n  - {model: gpt-5.6-luna, provider: openai, input: 2, output: 16, cache_read: 0.2}\n", 0o644)
	res = runBinary(t, dir, "stats")
	// 600k uncached × $2 + 400k cached × $0.20 + 100k output × $16, per million.
	if res.code != 0 || !strings.Contains(res.stdout, "cost    $2.8800\n") {
		t.Fatalf("stats with the project's price:\n%s%s", res.stdout, res.stderr)
	}
	if res := runBinary(t, dir, "tree", "--latest"); !strings.Contains(res.stdout, "$2.8800") {
		t.Errorf("tree:\n%s", res.stdout)
	}
	if res := runBinary(t, dir, "config", "show"); !strings.Contains(res.stdout, "gpt-5.6-luna = input $2, output $16 per million tokens") {
		t.Errorf("config show:\n%s", res.stdout)
	}
}

// A run with a step whose provider reported its cost and one that reported
// only tokens has the same cost in reel stats, reel tree, reel runs (the
// index reel serve lists from) and the span reel export --to otlp sends:
// the reported cost plus the tokens priced from the project's table.
func TestRunCostAgreesAcrossStatsTreeRunsAndSpans(t *testing.T) {
	otelEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".reel", "config.yaml"), "prices:\n  - {model: acme-large, provider: acme, input: 2, output: 10}\n", 0o644)
	const runID = "0199aaaa-0000-4000-8000-0000000000aa"
	run := transcripttest.NewRun(t, transcript.Dir(filepath.Join(dir, ".reel", "storage")), runID, "", time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	record := run.Event
	reported := 0.5
	steps := []transcript.AgentResult{
		{Provider: "claude", Model: "claude-sonnet-4-5-20250929", Usage: transcript.Usage{InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100}, CostUSD: &reported},
		// 1M input × $2 + 100k output × $10, per million: $3.
		{Provider: "acme", Model: "acme/acme-large", Usage: transcript.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, TotalTokens: 1_100_000}},
	}
	record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "priced", Kind: transcript.KindWorkflow}})
	var total transcript.Usage
	for i, ar := range steps {
		path := fmt.Sprintf("step%d", i)
		record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: path, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindAgent}})
		record(transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: path, Payload: &transcript.StepPayload{Name: path, Kind: transcript.KindAgent, Result: ar}})
		total.Add(ar.Usage)
	}
	// The engine's run total counts the reported costs only.
	record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "priced", Kind: transcript.KindWorkflow,
		Result: transcript.RunResult{Status: "success", DurationMS: 3000, Usage: total, CostUSD: &reported}}})
	run.Close()
	const want = 3.5
	near := func(what string, got float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: cost %v, want %v", what, got, want)
		}
	}
	decode := func(res cliResult, v any) {
		t.Helper()
		if res.code != 0 {
			t.Fatalf("exit %d\n%s", res.code, res.stderr)
		}
		if err := json.Unmarshal([]byte(res.stdout), v); err != nil {
			t.Fatalf("%v\n%s", err, res.stdout)
		}
	}

	var stats struct {
		Total struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"total"`
	}
	decode(runBinary(t, dir, "stats", "--json", runID), &stats)
	near("reel stats", stats.Total.CostUSD)

	var tree struct {
		Run struct {
			CostUSD  float64 `json:"cost_usd"`
			Children []struct {
				CostUSD float64 `json:"cost_usd"`
			} `json:"children"`
		} `json:"run"`
	}
	decode(runBinary(t, dir, "tree", "--json", runID), &tree)
	near("reel tree", tree.Run.CostUSD)

	var runs []struct {
		RunID   string   `json:"run_id"`
		CostUSD *float64 `json:"cost_usd"`
	}
	decode(runBinary(t, dir, "runs", "--json"), &runs)
	if len(runs) != 1 || runs[0].CostUSD == nil {
		t.Fatalf("reel runs: %+v", runs)
	}
	near("reel runs", *runs[0].CostUSD)

	rcv := otlptest.NewGRPC(t)
	if res := runBinary(t, dir, "export", "--to", "otlp", "--otel-exporter", rcv.Endpoint, runID); res.code != 0 {
		t.Fatalf("export: exit %d\n%s", res.code, res.stderr)
	}
	costs := map[string]any{}
	for _, s := range rcv.Wait(t, 3, 10*time.Second) {
		costs[s.Name] = s.Attrs["reel.usage.cost_usd"]
	}
	if c, ok := costs["invoke_workflow priced"].(float64); !ok {
		t.Errorf("run span cost: %v", costs)
	} else {
		near("run span", c)
	}
	if c, ok := costs["invoke_agent step1"].(float64); !ok || math.Abs(c-3) > 1e-9 {
		t.Errorf("the tokens-only step's span: cost %v, want 3 (%v)", costs["invoke_agent step1"], costs)
	}
	if len(tree.Run.Children) != 2 || math.Abs(tree.Run.Children[1].CostUSD-3) > 1e-9 {
		t.Errorf("tree's tokens-only step: %+v", tree.Run.Children)
	}
}
