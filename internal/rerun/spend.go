package rerun

import (
	"fmt"

	"github.com/reelhq/reel/internal/runstore"
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

// maxChildDepth bounds the sub-workflow nesting TotalSpent reads, so that
// transcripts whose children name each other cannot recurse forever.
const maxChildDepth = 64

// TotalSpent is what the run and its sub-workflows spent, each child read
// from its own transcript beside the run's. A child whose transcript
// cannot be read counts as nothing and is named in the error, which does
// not stop the others being counted.
func (r *Run) TotalSpent() (Spend, error) {
	var errs []error
	s := r.totalSpent(map[string]bool{r.Path: true}, 0, &errs)
	if len(errs) > 0 {
		return s, fmt.Errorf("run %s: %w", r.RunID, errs[0])
	}
	return s, nil
}

// ChildSpent is what the child run id of the run at parentPath spent, its
// own sub-workflows included.
func ChildSpent(parentPath, id string) (Spend, error) {
	var errs []error
	s := childSpent(parentPath, id, map[string]bool{parentPath: true}, 0, &errs)
	if len(errs) > 0 {
		return s, errs[0]
	}
	return s, nil
}

func (r *Run) totalSpent(visiting map[string]bool, depth int, errs *[]error) Spend {
	s := r.Spent()
	for _, id := range r.ChildRuns() {
		c := childSpent(r.Path, id, visiting, depth+1, errs)
		s.Add(c.Usage, c.CostUSD)
	}
	return s
}

func childSpent(parentPath, id string, visiting map[string]bool, depth int, errs *[]error) Spend {
	cp, err := runstore.ChildPath(parentPath, id)
	if err != nil {
		*errs = append(*errs, err)
		return Spend{}
	}
	if visiting[cp] || depth >= maxChildDepth {
		*errs = append(*errs, fmt.Errorf("child run %s: sub-workflows nest deeper than %d or loop", id, maxChildDepth))
		return Spend{}
	}
	c, err := Load(cp, Options{})
	if err != nil {
		*errs = append(*errs, fmt.Errorf("child run %s: %w", id, err))
		return Spend{}
	}
	visiting[cp] = true
	defer delete(visiting, cp)
	return c.totalSpent(visiting, depth, errs)
}
