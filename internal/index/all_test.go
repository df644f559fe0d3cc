package index

import (
	"context"
	"testing"

	"github.com/reelhq/reel/internal/runstatus"
)

// ListAll gives what the pages give, newest first, cut at the limit; the
// tally adds up every listed run not already in its listed parent's
// figures, and names every status.
func TestListAllAndTally(t *testing.T) {
	ix := openIndex(t, sampleStorage(t))
	ctx := context.Background()
	page, err := ix.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	all, err := ix.ListAll(ctx, Filter{Limit: 1, After: "stale"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(page.Runs) || len(all) != 4 {
		t.Fatalf("ListAll: %d runs, one page holds %d", len(all), len(page.Runs))
	}
	for i := range all {
		if all[i].RunID != page.Runs[i].RunID {
			t.Errorf("run %d: %s, the page has %s", i, all[i].RunID, page.Runs[i].RunID)
		}
	}
	two, err := ix.ListAll(ctx, Filter{}, 2)
	if err != nil || len(two) != 2 || two[0].RunID != all[0].RunID {
		t.Fatalf("ListAll with limit 2: %d runs, %v", len(two), err)
	}

	tally := TallyRuns(all)
	if tally.Runs != 4 || len(tally.ByStatus) != len(runstatus.All) {
		t.Fatalf("tally: %+v", tally)
	}
	// A run's figures hold its child runs': a child listed with its
	// parent is not counted twice.
	listed := map[string]bool{}
	for _, r := range all {
		listed[r.RunID] = true
	}
	var tokens int64
	children := 0
	for _, r := range all {
		if listed[r.ParentRunID] {
			children++
			continue
		}
		tokens += r.Tokens
	}
	if tally.Tokens != tokens || tokens == 0 || children == 0 {
		t.Errorf("tally tokens %d, the top runs' %d (%d children listed)", tally.Tokens, tokens, children)
	}
	if sum := func() (s int) {
		for _, c := range tally.ByStatus {
			s += c
		}
		return
	}(); sum != 4 {
		t.Errorf("by status adds up to %d: %v", sum, tally.ByStatus)
	}
	if tally.PricedRuns > 0 && (tally.CostUSD == nil || !tally.Cost().Known) {
		t.Errorf("priced runs without a cost: %+v", tally)
	}
}
