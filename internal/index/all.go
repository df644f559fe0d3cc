package index

import (
	"context"
	"errors"
	"time"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runstatus"
)

// ListAll returns the runs f selects, newest first, page after page: at
// most limit of them (0: every one). f's Limit and After are its own.
func (ix *Index) ListAll(ctx context.Context, f Filter, limit int) ([]Run, error) {
	var runs []Run
	f.After = ""
	for {
		f.Limit = 1000
		if limit > 0 {
			f.Limit = min(1000, limit-len(runs))
		}
		page, err := ix.List(ctx, f)
		if err != nil {
			return runs, err
		}
		runs = append(runs, page.Runs...)
		if page.Next == "" || limit > 0 && len(runs) >= limit {
			return runs, nil
		}
		f.After = page.Next
	}
}

// SearchAll collects up to limit hits of q, newest first, page after page,
// each page checking candidates for at most budget. A query that grows too
// costly after some hits returns them with an error that is
// ErrQueryTooCostly: the caller may show them as a partial answer.
func (ix *Index) SearchAll(ctx context.Context, q string, limit int, budget time.Duration) ([]Hit, error) {
	var hits []Hit
	cursor := ""
	for len(hits) < limit {
		page, err := ix.Search(ctx, q, SearchOptions{Limit: limit - len(hits), After: cursor, Budget: budget})
		if err != nil {
			if errors.Is(err, ErrQueryTooCostly) && len(hits) > 0 {
				return hits, err
			}
			return nil, err
		}
		hits = append(hits, page.Hits...)
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	return hits, nil
}

// Tally sums a list of runs: what `reel runs --stats` prints.
type Tally struct {
	Runs     int            `json:"runs"`
	ByStatus map[string]int `json:"by_status"`
	// AvgDurationMS is over the runs that ended, of a known duration
	// (not Run.Untimed).
	AvgDurationMS int64 `json:"avg_duration_ms"`
	Tokens        int64 `json:"tokens"`
	// CostUSD adds the runs' costs (absent when none is known);
	// PricedRuns counts the runs with a known cost, UnpricedSteps the
	// steps of a model without a price that CostUSD leaves out.
	CostUSD       *float64 `json:"cost_usd,omitempty"`
	PricedRuns    int      `json:"priced_runs"`
	UnpricedSteps int      `json:"unpriced_steps,omitempty"`
	cost          pricing.Total
}

// Cost is the runs' cost added up.
func (t *Tally) Cost() pricing.Total { return t.cost }

// TallyRuns counts runs by status (every status of the vocabulary, zero
// or not) and adds up their durations, tokens and costs. A run's figures
// include its child runs' (Run.Usage), so a child listed with its parent
// adds nothing more.
func TallyRuns(runs []Run) *Tally {
	t := &Tally{Runs: len(runs), ByStatus: map[string]int{}}
	for _, s := range runstatus.All {
		t.ByStatus[s] = 0
	}
	listed := make(map[string]bool, len(runs))
	for _, r := range runs {
		listed[r.RunID] = true
	}
	var total time.Duration
	ended := 0
	for _, r := range runs {
		t.ByStatus[r.Status]++
		c := r.Cost()
		if c.Known {
			t.PricedRuns++
		}
		if !listed[r.ParentRunID] || r.ParentRunID == r.RunID {
			t.Tokens += r.Tokens
			t.cost.Add(c)
		}
		if runstatus.Ended(r.Status) && !r.Untimed {
			total += time.Duration(r.DurationMS) * time.Millisecond
			ended++
		}
	}
	if ended > 0 {
		t.AvgDurationMS = (total / time.Duration(ended)).Milliseconds()
	}
	t.CostUSD, t.UnpricedSteps = t.cost.USDPtr(), t.cost.Unpriced
	return t
}
