package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// spendDir copies testdata/spend (the workflow spender.yaml and its child)
// into a new directory beside the failing-once fake claude they run
// (examples/agents/fake-cli.sh behind a wrapper): spender's flaky and the
// child's c2 fail in their second turn the first time.
func spendDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "spend"), dir)
	transcripttest.FakeClaude(t, dir, "matters", "counts")
	return dir
}

// runTotals is the part of each reader's JSON that gives a run's total.
type runTotals struct {
	RunID   string           `json:"run_id"`
	Usage   transcript.Usage `json:"usage"`
	CostUSD *float64         `json:"cost_usd"`
}

func (r runTotals) cost() float64 {
	if r.CostUSD == nil {
		return 0
	}
	return *r.CostUSD
}

// readerTotals asks reel stats, status, runs and tree for run id's total
// (stats adds up the agent steps of the run's file and its sub-workflows',
// the others read run.completed, or the tree's sum without one).
func readerTotals(t *testing.T, dir, storage, id string) map[string]runTotals {
	t.Helper()
	read := func(v any, args ...string) {
		t.Helper()
		res := runBinary(t, dir, append(args, "--storage", storage, "--json")...)
		if err := json.Unmarshal([]byte(res.stdout), v); err != nil {
			t.Fatalf("reel %v: %v\n%s%s", args, err, res.stdout, res.stderr)
		}
	}
	out := map[string]runTotals{}
	var stats struct{ Total runTotals }
	read(&stats, "stats", id)
	out["stats"] = stats.Total
	var status runTotals
	read(&status, "status", id)
	out["status"] = status
	var tree struct{ Run runTotals }
	read(&tree, "tree", id)
	out["tree"] = tree.Run
	var rows []runTotals
	read(&rows, "runs")
	for _, r := range rows {
		if r.RunID == id {
			out["runs"] = r
		}
	}
	return out
}

// agree fails unless every reader gives the total reel stats gives.
func agree(t *testing.T, got map[string]runTotals) runTotals {
	t.Helper()
	want := got["stats"]
	for _, name := range []string{"status", "runs", "tree"} {
		g, ok := got[name]
		if !ok {
			t.Errorf("reel %s has no row for the run", name)
			continue
		}
		if g.Usage != want.Usage || math.Abs(g.cost()-want.cost()) > 1e-9 {
			t.Errorf("reel %s: %+v $%g, reel stats: %+v $%g", name, g.Usage, g.cost(), want.Usage, want.cost())
		}
	}
	return want
}

// A run whose agent steps failed after spending tokens, resumed twice (the
// second resume continuing the sub-workflow the first started), reports
// what every attempt spent: reel stats, status, runs and tree give the
// same total, and it counts each failed and re-run execution once. Resumed
// with --from sub instead, the run starts a new child, and what the
// discarded child spent counts too.
func TestResumedRunTotalIsWhatAllAttemptsSpent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		third []string
		// children is the number of child runs the run started.
		children int
	}{
		{"child continued", nil, 1},
		{"child started again", []string{"--from", "sub"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := spendDir(t)
			storage := filepath.Join(dir, "st")
			res := runBinary(t, dir, "run", "spender.yaml", "--storage", storage)
			if res.code == 0 {
				t.Fatalf("attempt 1 succeeded: %+v", res)
			}
			id := regexpRunID.FindStringSubmatch(res.stderr)[1]
			if res = runBinary(t, dir, "resume", id, "--storage", storage); res.code == 0 || !strings.Contains(res.stdout, "spendchild") {
				t.Fatalf("attempt 2 (should fail in the child): %+v", res)
			}
			if res = runBinary(t, dir, append([]string{"resume", id, "--storage", storage}, tc.third...)...); res.code != 0 {
				t.Fatalf("attempt 3: %+v", res)
			}

			total := agree(t, readerTotals(t, dir, storage, id))
			// Each turn of the fake claude spends 40 in / 9 out and
			// $0.0004. Attempt 1: ask 1 turn, flaky 1 (then failed).
			// Attempt 2: flaky 2, c1 1, c2 1 (then failed). Attempt 3:
			// c2 2, and with --from sub, c1 1 more.
			turns := int64(1 + 1 + 2 + 1 + 1 + 2)
			if tc.children == 2 {
				turns++
			}
			if total.Usage.InputTokens != 40*turns || total.Usage.OutputTokens != 9*turns || math.Abs(total.cost()-0.0004*float64(turns)) > 1e-9 {
				t.Errorf("total %+v $%g, want %d turns' worth", total.Usage, total.cost(), turns)
			}

			text := runBinary(t, dir, "tree", id, "--storage", storage).stdout
			if n := len(regexp.MustCompile(`spendchild  run `).FindAllString(text, -1)); n != tc.children {
				t.Errorf("tree shows %d child runs, want %d:\n%s", n, tc.children, text)
			}
			if !strings.Contains(text, "(re-run after resume)") {
				t.Errorf("tree does not mark the executions resumes ran again:\n%s", text)
			}

			// Cut the run's last run.completed: the tree adds up its
			// subtree instead, each child once.
			cut := filepath.Join(dir, "cut")
			src := transcript.Dir(storage)
			entries, err := os.ReadDir(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if e.Name() == id+".jsonl" {
					lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
					if !strings.Contains(lines[len(lines)-1], `"run.completed"`) {
						t.Fatalf("last line is not run.completed: %s", lines[len(lines)-1])
					}
					b = []byte(strings.Join(lines[:len(lines)-1], ""))
				}
				writeFile(t, filepath.Join(transcript.Dir(cut), e.Name()), string(b), 0o644)
			}
			got := readerTotals(t, dir, cut, id)
			for _, name := range []string{"stats", "status", "tree"} {
				if g := got[name]; g.Usage != total.Usage || math.Abs(g.cost()-total.cost()) > 1e-9 {
					t.Errorf("reel %s of the cut run: %+v $%g, want %+v $%g", name, g.Usage, g.cost(), total.Usage, total.cost())
				}
			}
		})
	}
}
