package pricing

import (
	"fmt"

	"github.com/reelhq/reel/transcript"
)

// Total is what a step, a run or a group of them cost, as far as it is
// known. It is the one account every reader keeps (reel runs, tree, status,
// stats, diff, the run index, the web view and the HTML replay) and String
// the one way they show it, so that a run shows the same figure everywhere.
//
// The rules it holds:
//   - A step's cost is its provider's reported figure, else its tokens
//     priced from the table, else unknown (Table.Step).
//   - A step that used no tokens and reported no cost (or a cost of zero)
//     has no cost to show: it adds nothing, not even a zero. A run of such
//     steps only shows "—", never "$0.0000".
//   - A total that leaves out steps of a model without a price says so:
//     "$1.2000+", or "—" when nothing in it is known.
type Total struct {
	// USD is the known part. Computed is the part of it that was priced
	// from the table rather than reported (a run.completed account holds
	// the reported part only: RunTotal adds the computed part to it).
	USD      float64
	Computed float64
	// Known is set when something in the total has a known cost.
	Known bool
	// Unpriced counts the steps that used tokens of a model without a
	// price: USD leaves them out.
	Unpriced int
}

// Step is what one agent step cost (see Total for the rules).
func (t *Table) Step(ar *transcript.AgentResult) Total {
	if ar == nil {
		return Total{}
	}
	used := ar.Usage != (transcript.Usage{})
	if ar.CostUSD != nil && (*ar.CostUSD != 0 || used) {
		return Total{USD: *ar.CostUSD, Known: true}
	}
	if !used {
		return Total{}
	}
	if usd, ok := t.Price(ar.Model, ar.Usage); ok {
		return Total{USD: usd, Computed: usd, Known: true}
	}
	return Total{Unpriced: 1}
}

// Add adds o to s.
func (s *Total) Add(o Total) {
	s.USD += o.USD
	s.Computed += o.Computed
	s.Known = s.Known || o.Known
	s.Unpriced += o.Unpriced
}

// RunTotal is a run's cost: the reported total its run.completed recorded
// (the engine's sum of the costs providers reported, its sub-workflows'
// included), when it has one, plus the part of steps that reel priced from
// the table; without a recorded total, steps' own sum. steps adds up the
// run's own steps and its child runs' totals (sub-workflows, imported
// subagents), so that a child's table-priced steps count in its parent:
// reel tree and the run index both add them so. A recorded total of zero
// for a run none of whose steps has a known cost says nothing (the
// no-usage rule).
func RunTotal(recorded *float64, steps Total) Total {
	if recorded == nil || *recorded == 0 && !steps.Known {
		return steps
	}
	return Total{USD: *recorded + steps.Computed, Computed: steps.Computed, Known: true, Unpriced: steps.Unpriced}
}

// Of rebuilds a total from the two figures a JSON account keeps (USDPtr
// and Unpriced): a cost, nil when unknown, and the unpriced steps.
func Of(usd *float64, unpriced int) Total {
	if usd == nil {
		return Total{Unpriced: unpriced}
	}
	return Total{USD: *usd, Known: true, Unpriced: unpriced}
}

// USDPtr is the known cost, nil when nothing is known: the cost_usd of
// reel's JSON outputs, absent rather than 0 when unknown.
func (s Total) USDPtr() *float64 {
	if !s.Known {
		return nil
	}
	v := s.USD
	return &v
}

// String shows the total as every reader does: "$0.1234", "$0.1234+" when
// steps of a model without a price are left out, "—" when nothing is known.
func (s Total) String() string {
	switch {
	case !s.Known:
		return "—"
	case s.Unpriced > 0:
		return fmt.Sprintf("$%.4f+", s.USD)
	}
	return fmt.Sprintf("$%.4f", s.USD)
}
