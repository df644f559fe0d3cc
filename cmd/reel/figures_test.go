package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/importer"
	"github.com/reelhq/reel/internal/testfixtures"
)

// importFixture imports one shared recording into storage and returns its
// run id.
func importFixture(t *testing.T, storage, format, file string) string {
	t.Helper()
	path := filepath.Join(testfixtures.Dir(t, format), file)
	out, errOut, err := runReel(t, context.Background(), "import", "--storage", storage, "--json", path)
	if err != nil {
		t.Fatalf("import %s: %v\n%s", file, err, errOut)
	}
	var runs []importer.Run
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 1 || runs[0].RunID == "" {
		t.Fatalf("import %s: %v\n%s", file, err, out)
	}
	return runs[0].RunID
}

// Issue 24, point 3: stats --json counts tool calls per provider and model
// too, on a real Claude Code session (jnarowski/agentcmd's
// full-session-two.jsonl).
func TestStatsToolCallsPerProviderAndModel(t *testing.T) {
	storage := t.TempDir()
	id := importFixture(t, storage, "claude-session-log", "full-session-two.jsonl")
	out, errOut, err := runReel(t, context.Background(), "stats", "--json", "--storage", storage, id)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	type group struct {
		Name      string `json:"name"`
		ToolCalls int    `json:"tool_calls"`
	}
	var rep struct {
		Total struct {
			ToolCalls int `json:"tool_calls"`
		} `json:"total"`
		Providers, Models, Tools []group
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Total.ToolCalls == 0 {
		t.Fatalf("no tool calls counted:\n%s", out)
	}
	sum := func(gs []group) (n int) {
		for _, g := range gs {
			n += g.ToolCalls
		}
		return n
	}
	if p, m, tl := sum(rep.Providers), sum(rep.Models), sum(rep.Tools); p != rep.Total.ToolCalls || m != rep.Total.ToolCalls || tl != rep.Total.ToolCalls {
		t.Errorf("tool calls: total %d, by provider %d, by model %d, by tool %d", rep.Total.ToolCalls, p, m, tl)
	}
	if len(rep.Providers) != 1 || rep.Providers[0].Name != "claude" {
		t.Errorf("providers %+v", rep.Providers)
	}
}

// Issue 24, point 6: imported sessions are not offered for resume, and
// resuming one says why.
func TestImportedSessionsAreNotResumable(t *testing.T) {
	storage := t.TempDir()
	// an imported session that ended in an error: a failed run, which a
	// run of reel's own would be offered for resume for
	id := importFixture(t, storage, "gemini-stream-json", "gemini_stream_error.jsonl")
	ctx := context.Background()
	if out, _, _ := runReel(t, ctx, "runs", "--storage", storage); !strings.Contains(out, id) || !strings.Contains(out, "failure") {
		t.Fatalf("the import is not a failed run:\n%s", out)
	}
	out, errOut, err := runReel(t, ctx, "resume", "--list", "--storage", storage)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if strings.Contains(out, id) {
		t.Errorf("resume --list offers the imported session:\n%s", out)
	}
	_, errOut, err = runReel(t, ctx, "resume", "--storage", storage, id)
	if err == nil || !strings.Contains(err.Error()+errOut, "was imported from") || strings.Contains(err.Error()+errOut, "older reel") {
		t.Errorf("resume of an import: %v\n%s", err, errOut)
	}
}

// Issue 24, point 13: reel diff of two agentlog imports of the same agent
// (Shadow's demo baseline and candidate, the shared fixtures) aligns their
// single agent steps and shows the durations the traces recorded
// (latency_ms), not the instant their events were written at.
func TestAgentlogBaselineCandidateDiff(t *testing.T) {
	storage := t.TempDir()
	base := importFixture(t, storage, "agentlog", "demo-baseline.agentlog")
	cand := importFixture(t, storage, "agentlog", "demo-candidate.agentlog")
	out, errOut, err := runReel(t, context.Background(), "diff", "--json", "--storage", storage, base, cand)
	var ee *exitError
	if err != nil && !(errors.As(err, &ee) && ee.code == exitNo) { // exit 1: the runs differ, as diff(1)
		t.Fatalf("%v\n%s", err, errOut)
	}
	var d struct {
		A, B struct {
			DurationMS int64 `json:"duration_ms"`
		}
		Steps []struct {
			Label string `json:"label"`
			A, B  *struct {
				DurationMS int64 `json:"duration_ms"`
			}
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(d.Steps) != 1 || d.Steps[0].A == nil || d.Steps[0].B == nil {
		t.Fatalf("steps not aligned: %s", out)
	}
	// the traces' latency_ms: baseline 98+12+115+84, candidate 412+12+534+398
	if a, b := d.Steps[0].A.DurationMS, d.Steps[0].B.DurationMS; a != 309 || b != 1356 {
		t.Errorf("step durations %d and %d ms, want 309 and 1356", a, b)
	}
	if d.A.DurationMS != 309 || d.B.DurationMS != 1356 {
		t.Errorf("run durations %d and %d ms, want 309 and 1356", d.A.DurationMS, d.B.DurationMS)
	}
}

// Compactions show with their tokens before and after in the terminal and
// Markdown replays and on the run page (the HTML replay is the page of
// reel serve): Claude Code stream-json gives both figures
// (untether's autocompact capture), a session log only the size before,
// the size after being the next call's input (our own recording in the
// session log's shape).
func TestCompactionTokensInEveryView(t *testing.T) {
	storage := t.TempDir()
	ctx := context.Background()
	check := func(t *testing.T, path, want string) {
		out, errOut, err := runReel(t, ctx, "import", "--storage", storage, "--json", path)
		var imported []importer.Run
		if err != nil || json.Unmarshal([]byte(out), &imported) != nil || len(imported) != 1 {
			t.Fatalf("import %s: %v\n%s%s", path, err, out, errOut)
		}
		id := imported[0].RunID
		for _, format := range []string{"text", "markdown"} {
			out, errOut, err := runReel(t, ctx, "replay", "--storage", storage, "--format", format, id)
			if err != nil || !strings.Contains(out, want) {
				t.Errorf("replay --format %s: %v, want %q in\n%s%s", format, err, want, out, errOut)
			}
		}
		page := filepath.Join(t.TempDir(), "page.html")
		if _, errOut, err := runReel(t, ctx, "replay", "--storage", storage, "--format", "html", "-o", page, id); err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("run page: %v, want %q", err, want)
		}
	}
	t.Run("session-log", func(t *testing.T) {
		check(t, filepath.Join("..", "..", "internal", "normalize", "testdata", "recordings", "claude-session-log", "manual-compact.jsonl"),
			"context compacted: 153k → 9k tokens (manual)")
	})
	t.Run("stream-json", func(t *testing.T) {
		check(t, filepath.Join(testfixtures.Dir(t, "claude-stream-json"), "claude_autocompact_2.1.285.jsonl"),
			"context compacted: 79k → 15k tokens (auto)")
	})
}

// Issue 24, point 10: a Claude Code session's subagents
// (<session>/subagents/agent-<id>.jsonl, our own recording in the real
// layout: one linked by the Task result's toolUseResult.agentId, one by
// the "agentId: <id>" its text ends with) are imported with the session as
// its child runs, each opened by its Task call as a sub-workflow is, and
// not as runs of their own; the run's tokens and cost count theirs.
func TestImportClaudeSubagentsAsChildRuns(t *testing.T) {
	storage := t.TempDir()
	ctx := context.Background()
	dir := filepath.Join("..", "..", "internal", "importer", "testdata", "subagents")
	out, errOut, err := runReel(t, ctx, "import", "--storage", storage, "--json", dir)
	var imported []importer.Run
	if err != nil || json.Unmarshal([]byte(out), &imported) != nil {
		t.Fatalf("import: %v\n%s%s", err, out, errOut)
	}
	if len(imported) != 1 || len(imported[0].ChildRunIDs) != 2 || len(imported[0].Warnings) != 0 {
		t.Fatalf("imported %+v, want one session with two child runs", imported)
	}
	id := imported[0].RunID
	out, errOut, err = runReel(t, ctx, "tree", "--json", "--storage", storage, id)
	if err != nil {
		t.Fatalf("tree: %v\n%s", err, errOut)
	}
	type node struct {
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		ChildRunID string `json:"child_run_id"`
		Usage      struct {
			TotalTokens int64 `json:"total_tokens"`
		} `json:"usage"`
		CostUSD  *float64 `json:"cost_usd"`
		Children []node   `json:"children"`
	}
	var tree struct {
		Run node `json:"run"`
	}
	if err := json.Unmarshal([]byte(out), &tree); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	root := tree.Run
	var calls []string
	var sum int64
	var cost float64
	for _, c := range root.Children {
		if c.CostUSD != nil {
			cost += *c.CostUSD
		}
		sum += c.Usage.TotalTokens
		if c.Kind != "call_workflow" {
			continue
		}
		if len(c.Children) != 1 || c.Children[0].Kind != "workflow" || c.ChildRunID == "" {
			t.Errorf("subagent %s: not its child run's caller: %+v", c.Name, c)
		}
		calls = append(calls, c.Name)
	}
	if want := []string{"Explore: Find price rounding", "general-purpose: Read the pricing tests"}; strings.Join(calls, "|") != strings.Join(want, "|") {
		t.Errorf("subagent steps %q, want %q\n%s", calls, want, out)
	}
	if root.Usage.TotalTokens != sum || root.CostUSD == nil || fmt.Sprintf("%.4f", *root.CostUSD) != fmt.Sprintf("%.4f", cost) {
		t.Errorf("run: %d tokens, cost %v; its steps and subagents: %d tokens, $%.4f", root.Usage.TotalTokens, root.CostUSD, sum, cost)
	}
	// Every view gives the session its subagents' tokens and cost (the
	// run index gave its own alone: $0.0254 where tree said $0.0436), and
	// each subagent its own.
	want := map[string]figures{id: {tokens: 69956, usd: *root.CostUSD, known: true}}
	for _, c := range root.Children {
		if c.Kind == "call_workflow" && len(c.Children) == 1 {
			run := c.Children[0]
			want[c.ChildRunID] = figures{tokens: run.Usage.TotalTokens, usd: *run.CostUSD, known: true}
		}
	}
	if got := want[id].shown(); got != "$0.0436" || len(want) != 3 {
		t.Errorf("tree: the session cost %s, want $0.0436 (its own $0.0254 and its subagents' $0.0040 and $0.0142); %d runs", got, len(want))
	}
	checkEveryView(t, storage, want)
	out, errOut, err = runReel(t, ctx, "replay", "--storage", storage, id)
	if err != nil || !strings.Contains(out, "RoundHalfEven") || !strings.Contains(out, "subagent-2 calls sub-workflow run") {
		t.Errorf("replay does not show the subagents inline: %v\n%s%s", err, out, errOut)
	}
	if _, errOut, err := runReel(t, ctx, "verify", imported[0].Transcript); err != nil {
		t.Errorf("verify: %v\n%s", err, errOut)
	}
	// a second import finds nothing changed, the subagents included
	out, _, err = runReel(t, ctx, "import", "--storage", storage, "--json", dir)
	if err != nil || json.Unmarshal([]byte(out), &imported) != nil || len(imported) != 1 || imported[0].Outcome != importer.Unchanged {
		t.Errorf("import again: %v %+v", err, imported)
	}
}
