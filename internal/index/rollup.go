package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
)

// A run's row gives what the run cost with its child runs (sub-workflows,
// imported subagents), as reel tree does: pricing.RunTotal of its recorded
// total over its own steps and its children's figures. A run.completed
// total counts only what providers reported, so the steps of a child that
// reel priced from the table would be lost if each row stood alone.
//
// The index is incremental and a child may be indexed before its parent,
// after it, or grow while it runs, so each row keeps its own parts (own)
// beside the figures shown. A row written gets its figures from its own
// parts and its children's rows; its parent, and every run above, are
// worked out again the same way (rollUp) before the transaction that wrote
// it commits, once per batch however many of their children it wrote: the
// figures are always those of the rows present.

// own is what a run's own transcript says of its tokens and cost, before
// its children's figures are added in.
type own struct {
	// Steps is its agent steps' cost: reported, and priced from the
	// table for the steps whose provider reported none.
	Steps pricing.Total `json:"steps"`
	// Recorded is the cost its run.completed recorded, if any (it
	// includes its sub-workflows' reported costs).
	Recorded *float64 `json:"recorded,omitempty"`
	// Usage is its agent steps' tokens; RunUsage run.completed's, which
	// counts its sub-workflows' too.
	Usage    transcript.Usage  `json:"usage"`
	RunUsage *transcript.Usage `json:"run_usage,omitempty"`
}

// own prices what the fold read (see own).
func (f *fold) own(prices *pricing.Table) own {
	o := own{Recorded: f.RunCost, Usage: f.AgentUsage, RunUsage: f.RunUsage}
	if f.AgentCost != nil {
		o.Steps = pricing.Total{USD: *f.AgentCost, Known: true}
	}
	// In a fixed order, so that the same fold always gives the same sum.
	for _, model := range slices.Sorted(maps.Keys(f.Unreported)) {
		u := f.Unreported[model]
		if usd, ok := prices.Price(model, u.Usage); ok {
			o.Steps.Add(pricing.Total{USD: usd, Computed: usd, Known: true})
		} else {
			o.Steps.Add(pricing.Total{Unpriced: u.Steps})
		}
	}
	return o
}

// figures are what a row shows: a run's tokens and cost, its children's
// included.
type figures struct {
	cost  pricing.Total
	usage transcript.Usage
}

// with is the run's figures given its children's: the recorded totals
// when run.completed gave them, else the sums (the rule of exectree's
// finish).
func (o own) with(children []figures) figures {
	steps, usage := o.Steps, o.Usage
	for _, c := range children {
		steps.Add(c.cost)
		usage.Add(c.usage)
	}
	if o.RunUsage != nil {
		usage = *o.RunUsage
	}
	return figures{cost: pricing.RunTotal(o.Recorded, steps), usage: usage}
}

// dbtx is a transaction or the database itself.
type dbtx interface {
	querier
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// childFigures reads the figures of the rows whose parent is runID.
func childFigures(ctx context.Context, tx dbtx, runID string) ([]figures, error) {
	rows, err := tx.QueryContext(ctx, `SELECT cost_usd, computed_usd, unpriced_steps, input_tokens, output_tokens, cache_read_tokens,
		cache_write_tokens, reasoning_tokens, total_tokens FROM runs WHERE parent_run_id = ? AND run_id != ?`, runID, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []figures
	for rows.Next() {
		var c figures
		var usd sql.NullFloat64
		u := &c.usage
		if err := rows.Scan(&usd, &c.cost.Computed, &c.cost.Unpriced, &u.InputTokens, &u.OutputTokens, &u.CacheReadTokens,
			&u.CacheWriteTokens, &u.ReasoningTokens, &u.TotalTokens); err != nil {
			return nil, err
		}
		c.cost.USD, c.cost.Known = usd.Float64, usd.Valid
		out = append(out, c)
	}
	return out, rows.Err()
}

// rollUp works out again the figures of the run id and of every run above
// it, from their own parts and their children's rows, as far up as a
// transcript may link (runs.MaxDepth) and never twice in a loop of
// parents.
func rollUp(ctx context.Context, tx dbtx, id string) error {
	seen := map[string]bool{}
	for depth := 0; id != "" && !seen[id] && depth <= runs.MaxDepth; depth++ {
		seen[id] = true
		var parent, ownJSON string
		err := tx.QueryRowContext(ctx, `SELECT parent_run_id, own FROM runs WHERE run_id = ?`, id).Scan(&parent, &ownJSON)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // the parent is not indexed (yet): it adds its children when it is
		}
		if err != nil {
			return fmt.Errorf("index: figures of run %s: %w", id, err)
		}
		var o own
		if err := json.Unmarshal([]byte(ownJSON), &o); err != nil {
			return fmt.Errorf("index: figures of run %s: %w", id, err)
		}
		kids, err := childFigures(ctx, tx, id)
		if err != nil {
			return fmt.Errorf("index: figures of run %s: %w", id, err)
		}
		fig := o.with(kids)
		u := fig.usage
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET cost_usd = ?, computed_usd = ?, unpriced_steps = ?, input_tokens = ?, output_tokens = ?,
			cache_read_tokens = ?, cache_write_tokens = ?, reasoning_tokens = ?, total_tokens = ? WHERE run_id = ?`,
			nullCost(fig.cost), fig.cost.Computed, fig.cost.Unpriced, u.InputTokens, u.OutputTokens,
			u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens, u.TotalTokens, id); err != nil {
			return fmt.Errorf("index: figures of run %s: %w", id, err)
		}
		id = parent
	}
	return nil
}

// nullCost is a cost as the cost_usd column holds it: NULL when unknown.
func nullCost(c pricing.Total) any {
	if !c.Known {
		return nil
	}
	return c.USD
}
