package rerun

import (
	"fmt"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
)

// What a run spent is money spent: every agent execution that completed
// with a result counts, in whichever attempt of the run it ran, whether the
// run still stands on it or not. A failed execution a retry made good, or
// one a resume discarded and ran again, was paid for all the same. This is
// the figure reel stats adds up over the file's agent steps, and the one a
// resumed run's run.completed reports (package engine), so that every
// reader of run totals agrees with it.
//
// A sub-workflow counts once per child run: a child a resume continued
// keeps its run id and reports, in its own run.completed, what all its
// attempts spent; a child started afresh is another run, and both count.

// Spend is what step executions spent: the tokens their providers counted
// and the costs they reported.
type Spend struct {
	Usage transcript.Usage
	// CostUSD is nil when no provider reported a cost.
	CostUSD *float64
}

// Add adds u and, when known, cost.
func (s *Spend) Add(u transcript.Usage, cost *float64) {
	s.Usage.Add(u)
	if cost != nil {
		c := *cost
		if s.CostUSD != nil {
			c += *s.CostUSD
		}
		s.CostUSD = &c
	}
}

// Spent is what the run's own agent steps spent across all its attempts
// (All), sub-workflows left out (ChildRuns, TotalSpent).
func (r *Run) Spent() Spend {
	var s Spend
	for _, e := range r.All {
		if e.Kind != transcript.KindAgent || !e.Completed || len(e.Result) == 0 {
			continue
		}
		var ar transcript.AgentResult
		if transcript.DecodeResult(e.Result, &ar) == nil {
			s.Add(ar.Usage, ar.CostUSD)
		}
	}
	return s
}

// ChildRuns lists the sub-workflow runs the run's call_workflow executions
// started, in every attempt, each once, in the order they were first
// started.
func (r *Run) ChildRuns() []string {
	var ids []string
	seen := map[string]bool{}
	for _, e := range r.All {
		if e.ChildRunID != "" && !seen[e.ChildRunID] {
			seen[e.ChildRunID] = true
			ids = append(ids, e.ChildRunID)
		}
	}
	return ids
}

// TotalSpent is what the run and its sub-workflows spent, each child read
// from its own transcript beside the run's (as deep as runs.MaxDepth). A
// child whose transcript cannot be read counts as nothing and is named in
// the error, which does not stop the others being counted.
func (r *Run) TotalSpent() (Spend, error) {
	var errs []error
	s := r.totalSpent(runs.Open(r.Path, runs.Options{}), &errs)
	if len(errs) > 0 {
		return s, fmt.Errorf("run %s: %w", r.RunID, errs[0])
	}
	return s, nil
}

// ChildSpent is what the child run id of the run at parentPath spent, its
// own sub-workflows included.
func ChildSpent(parentPath, id string) (Spend, error) {
	var errs []error
	s := childSpent(runs.Open(parentPath, runs.Options{}), id, &errs)
	if len(errs) > 0 {
		return s, errs[0]
	}
	return s, nil
}

func (r *Run) totalSpent(src *runs.Run, errs *[]error) Spend {
	s := r.Spent()
	for _, id := range r.ChildRuns() {
		c := childSpent(src, id, errs)
		s.Add(c.Usage, c.CostUSD)
	}
	return s
}

func childSpent(parent *runs.Run, id string, errs *[]error) Spend {
	cr, err := parent.Child(id)
	if err != nil {
		*errs = append(*errs, err)
		return Spend{}
	}
	c, err := read(cr, Options{})
	if err != nil {
		*errs = append(*errs, fmt.Errorf("child run %s: %w", id, err))
		return Spend{}
	}
	return c.totalSpent(cr, errs)
}
