package exectree

import (
	"time"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

// Standing is where one run stands, read off its tree: what `reel status`
// shows and `reel status --json` prints.
type Standing struct {
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts,omitempty"`
	// Started is absent, and DurationMS 0, for an untimed run (Untimed:
	// an imported recording whose events had no time).
	Started    time.Time `json:"started,omitzero"`
	DurationMS int64     `json:"duration_ms"`
	Untimed    bool      `json:"untimed,omitempty"`
	ExitCode   *int      `json:"exit_code,omitempty"`
	Error      string    `json:"error,omitempty"`
	// Steps counts the steps where the run stands (runstatus.StepCounts:
	// retries and what a resume ran again counted once, by the outcome
	// that stands), sub-workflows' included.
	Steps runstatus.StepCounts `json:"steps"`
	// Open are the deepest steps running now (or cut short when the run
	// was interrupted); Failed the deepest that failed.
	Open   []StepAt         `json:"open,omitempty"`
	Failed []StepAt         `json:"failed,omitempty"`
	Usage  transcript.Usage `json:"usage"`
	// CostUSD and UnpricedSteps are the run's cost (pricing.Total),
	// absent when unknown.
	CostUSD       *float64 `json:"cost_usd,omitempty"`
	UnpricedSteps int      `json:"unpriced_steps,omitempty"`
	cost          pricing.Total
	SubRuns       int      `json:"sub_runs,omitempty"`
	Transcript    string   `json:"transcript"`
	Warnings      []string `json:"warnings,omitempty"`
}

// Cost is the run's cost, sub-workflows included.
func (s *Standing) Cost() pricing.Total { return s.cost }

// StepAt is one step execution worth naming in a Standing.
type StepAt struct {
	Path       string `json:"path"`
	Iteration  int    `json:"iteration"`
	Kind       string `json:"kind"`
	Status     string `json:"status"`
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
	RunID      string `json:"run_id,omitempty"`
}

// Standing reads where the run stands off the tree; transcriptPath is the
// run's file, named in the result. A running run's duration, and its open
// steps', run to now.
func (t *Tree) Standing(transcriptPath string) *Standing {
	root := t.Root
	at := &Standing{RunID: root.RunID, Workflow: root.Name, Status: root.Status, Attempts: root.Attempts, Started: root.Start,
		DurationMS: time.Duration(root.Duration).Milliseconds(), ExitCode: root.ExitCode, Error: root.Error,
		Usage: root.Usage, CostUSD: root.CostUSD, UnpricedSteps: root.UnpricedSteps, cost: root.Cost(), Transcript: transcriptPath, Warnings: t.Warnings}
	switch {
	case root.Untimed:
		at.Started, at.DurationMS, at.Untimed = time.Time{}, 0, true
	case !root.Start.IsZero() && at.Status == runstatus.Running:
		at.DurationMS = time.Since(root.Start).Milliseconds()
	}
	at.visit(root, root)
	return at
}

// visit counts n and its subtree where they stand.
func (at *Standing) visit(root, n *Node) {
	switch n.Superseded {
	case runstatus.SupersededByResume:
		// Nor its subtree: a sub-workflow it called is the one the
		// resume's execution continued, counted there.
		at.Steps.Rerun++
		return
	case runstatus.SupersededByRetry:
		return
	}
	if n != root {
		at.step(n)
	}
	for _, c := range n.Children {
		at.visit(root, c)
	}
}

// step counts one step execution, and names it when it is the deepest of
// its status (a failed sub-workflow is named by its failed step).
func (at *Standing) step(n *Node) {
	if n.Kind == transcript.KindWorkflow {
		at.SubRuns++
		return
	}
	if n.Kind == KindIteration {
		return
	}
	at.Steps.Add(n.Status)
	for _, c := range n.Children {
		if c.Superseded == "" && (c.Status == n.Status || c.Kind == KindIteration) {
			return
		}
	}
	s := StepAt{Path: n.Path, Iteration: n.Iteration, Kind: n.Kind, Status: n.Status, DurationMS: time.Duration(n.Duration).Milliseconds(), Error: n.Error}
	switch n.Status {
	case runstatus.Running, runstatus.Interrupted:
		if s.Status == runstatus.Running && !n.Start.IsZero() {
			s.DurationMS = time.Since(n.Start).Milliseconds()
		}
		at.Open = append(at.Open, s)
	case runstatus.Failure:
		at.Failed = append(at.Failed, s)
	}
}
