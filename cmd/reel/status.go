package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

// runAt is where one run stands: what `reel status --json` prints.
type runAt struct {
	RunID      string    `json:"run_id"`
	Workflow   string    `json:"workflow"`
	Status     string    `json:"status"`
	Attempts   int       `json:"attempts,omitempty"`
	Started    time.Time `json:"started,omitzero"`
	DurationMS int64     `json:"duration_ms"`
	ExitCode   *int      `json:"exit_code,omitempty"`
	Error      string    `json:"error,omitempty"`
	// Steps counts the steps where the run stands (runstatus.StepCounts:
	// retries and what a resume ran again counted once, by the outcome
	// that stands), sub-workflows' included.
	Steps  runstatus.StepCounts `json:"steps"`
	Open   []stepAt             `json:"open,omitempty"`
	Failed []stepAt             `json:"failed,omitempty"`
	Usage  transcript.Usage     `json:"usage"`
	// CostUSD and UnpricedSteps are the run's cost (pricing.Total),
	// absent when unknown.
	CostUSD       *float64 `json:"cost_usd,omitempty"`
	UnpricedSteps int      `json:"unpriced_steps,omitempty"`
	cost          pricing.Total
	SubRuns       int      `json:"sub_runs,omitempty"`
	Transcript    string   `json:"transcript"`
	Warnings      []string `json:"warnings,omitempty"`
}

// stepAt is one step execution worth naming.
type stepAt struct {
	Path       string `json:"path"`
	Iteration  int    `json:"iteration"`
	Kind       string `json:"kind"`
	Status     string `json:"status"`
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
	RunID      string `json:"run_id,omitempty"`
}

func newStatusCmd() *cobra.Command {
	var (
		refs          runRefFlags
		asJSON, quiet bool
	)
	cmd := &cobra.Command{
		Use:   "status RUN|--latest",
		Short: "Show where a live or finished run stands, on one screen",
		Long: `Show where a run stands: its status (success, failure, cancelled, running or
interrupted), how long it has run, how many steps succeeded, failed or are
under way, which steps are running now (or were when it was interrupted),
which failed and why, and its tokens and cost, sub-workflows included.
A run that did not succeed says how to resume it.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeRunIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			run, tree, err := refs.tree(args)
			if err != nil {
				return err
			}
			at := standing(tree, run.Path)
			out := cmd.OutOrStdout()
			switch {
			case asJSON:
				if err := writeJSON(out, at); err != nil {
					return err
				}
			case quiet:
				fmt.Fprintln(out, at.Status)
			default:
				writeStanding(out, at, palette{on: useColor(cmd, out)})
			}
			// Damage read around: exit 1, as every reading command.
			return reportWarnings(cmd, tree.Warnings)
		},
	}
	refs.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the run's status (success, failure, cancelled, running, interrupted)")
	addFormatFlag(cmd, &asJSON, &quiet, "only the status, as --quiet")
	return cmd
}

func standing(t *exectree.Tree, path string) runAt {
	root := t.Root
	at := runAt{RunID: root.RunID, Workflow: root.Name, Status: root.Status, Attempts: root.Attempts, Started: root.Start,
		DurationMS: time.Duration(root.Duration).Milliseconds(), ExitCode: root.ExitCode, Error: root.Error,
		Usage: root.Usage, CostUSD: root.CostUSD, UnpricedSteps: root.UnpricedSteps, cost: root.Cost(), Transcript: path, Warnings: t.Warnings}
	if !runstatus.Ended(at.Status) && !root.Start.IsZero() && at.Status == runstatus.Running {
		at.DurationMS = time.Since(root.Start).Milliseconds()
	}
	var visit, step func(n *exectree.Node)
	visit = func(n *exectree.Node) {
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
			step(n)
		}
		for _, c := range n.Children {
			visit(c)
		}
	}
	step = func(n *exectree.Node) {
		if n.Kind == transcript.KindWorkflow {
			at.SubRuns++
			return
		}
		if n.Kind == exectree.KindIteration {
			return
		}
		at.Steps.Add(n.Status)
		deepest := true
		for _, c := range n.Children {
			if c.Superseded == "" && (c.Status == n.Status || c.Kind == exectree.KindIteration) {
				deepest = false
			}
		}
		if !deepest {
			return
		}
		s := stepAt{Path: n.Path, Iteration: n.Iteration, Kind: n.Kind, Status: n.Status, DurationMS: time.Duration(n.Duration).Milliseconds(), Error: n.Error}
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
	visit(root)
	return at
}

func writeStanding(w io.Writer, at runAt, p palette) {
	key := func(k string) string { return p.bold(fmt.Sprintf("%-10s", k)) }
	id := at.RunID
	if at.Attempts > 1 {
		id += p.dim(fmt.Sprintf("  (attempt %d, resumed)", at.Attempts))
	}
	fmt.Fprintf(w, "%s %s\n", key("run"), id)
	fmt.Fprintf(w, "%s %s\n", key("workflow"), at.Workflow)
	d := exectree.FormatDuration(time.Duration(at.DurationMS) * time.Millisecond)
	st := p.status(at.Status)
	switch at.Status {
	case runstatus.Running:
		st += "  " + d + " so far"
	case runstatus.Interrupted:
		st += "  after " + d + " (the process died; nobody writes the transcript)"
	default:
		if at.ExitCode != nil && *at.ExitCode != 0 {
			st += fmt.Sprintf("  exit %d", *at.ExitCode)
		}
		st += "  in " + d
	}
	fmt.Fprintf(w, "%s %s\n", key("status"), st)
	if !at.Started.IsZero() {
		fmt.Fprintf(w, "%s %s\n", key("started"), at.Started.Local().Format("2006-01-02 15:04:05"))
	}
	c := at.Steps
	parts := []string{fmt.Sprintf("%d succeeded", c.Succeeded), fmt.Sprintf("%d failed", c.Failed)}
	for _, x := range []struct {
		n    int
		what string
	}{{c.Cancelled, runstatus.Cancelled}, {c.Running, runstatus.Running}, {c.Interrupted, runstatus.Interrupted}} {
		if x.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", x.n, x.what))
		}
	}
	steps := strings.Join(parts, ", ")
	if at.SubRuns > 0 {
		steps += fmt.Sprintf(" (with %d sub-workflow run(s))", at.SubRuns)
	}
	switch c.Rerun {
	case 0:
	case 1:
		steps += "; 1 step re-run after resume"
	default:
		steps += fmt.Sprintf("; %d steps re-run after resume", c.Rerun)
	}
	fmt.Fprintf(w, "%s %s\n", key("steps"), steps)
	for _, s := range at.Open {
		what := "running"
		if s.Status == runstatus.Interrupted {
			what = "cut short"
		}
		fmt.Fprintf(w, "%s %s  %s  %s\n", key(what), stepLabel(s), p.dim(s.Kind), exectree.FormatDuration(time.Duration(s.DurationMS)*time.Millisecond))
	}
	for _, s := range at.Failed {
		fmt.Fprintf(w, "%s %s  %s\n", key("failed"), stepLabel(s), oneLine(s.Error, 100))
	}
	if at.Error != "" && len(at.Failed) == 0 {
		fmt.Fprintf(w, "%s %s\n", key("error"), oneLine(at.Error, 100))
	}
	if u := at.Usage; u.InputTokens+u.OutputTokens > 0 {
		fmt.Fprintf(w, "%s %s\n", key("tokens"), exectree.FormatUsage(u))
	}
	fmt.Fprintf(w, "%s %s\n", key("cost"), at.cost)
	fmt.Fprintf(w, "%s %s\n", key("transcript"), at.Transcript)
	if at.Status == runstatus.Interrupted || at.Status == runstatus.Failure || at.Status == runstatus.Cancelled {
		fmt.Fprintf(w, "%s reel resume %s\n", key("resume"), at.RunID)
	}
}

func stepLabel(s stepAt) string {
	if s.Iteration > 0 {
		return fmt.Sprintf("%s [%d]", s.Path, s.Iteration)
	}
	return s.Path
}

func oneLine(s string, n int) string {
	return cut(strings.Join(strings.Fields(s), " "), n)
}
