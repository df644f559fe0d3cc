package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
