package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/runstatus"
)

// statusOptions are the flags of `reel status`.
type statusOptions struct {
	refs runRefFlags
	listFlags
}

func newStatusCmd() *cobra.Command {
	var o statusOptions
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
		RunE:              func(cmd *cobra.Command, args []string) error { return runStatus(cmd, args, &o) },
	}
	o.refs.register(cmd)
	o.register(cmd, "print only the run's status (success, failure, cancelled, running, interrupted)", "only the status, as --quiet")
	return cmd
}

func runStatus(cmd *cobra.Command, args []string, o *statusOptions) error {
	run, tree, err := o.refs.tree(args)
	if err != nil {
		return err
	}
	at := tree.Standing(run.Path)
	out := cmd.OutOrStdout()
	switch {
	case o.asJSON:
		if err := writeJSON(out, at); err != nil {
			return err
		}
	case o.quiet:
		fmt.Fprintln(out, at.Status)
	default:
		writeStanding(out, at, palette{on: useColor(cmd, out)})
	}
	// Damage read around: exit 1, as every reading command.
	return reportWarnings(cmd, tree.Warnings)
}

func writeStanding(w io.Writer, at *exectree.Standing, p palette) {
	key := func(k string) string { return p.bold(fmt.Sprintf("%-10s", k)) }
	id := at.RunID
	if at.Attempts > 1 {
		id += p.dim(fmt.Sprintf("  (attempt %d, resumed)", at.Attempts))
	}
	fmt.Fprintf(w, "%s %s\n", key("run"), id)
	fmt.Fprintf(w, "%s %s\n", key("workflow"), at.Workflow)
	d := exectree.FormatDuration(time.Duration(at.DurationMS) * time.Millisecond)
	if at.Untimed {
		d = "—"
	}
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
	switch {
	case at.Untimed:
		fmt.Fprintf(w, "%s %s\n", key("started"), "—"+p.dim("  (the recording gives no times)"))
	case !at.Started.IsZero():
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
	fmt.Fprintf(w, "%s %s\n", key("cost"), at.Cost())
	fmt.Fprintf(w, "%s %s\n", key("transcript"), at.Transcript)
	if at.Status == runstatus.Interrupted || at.Status == runstatus.Failure || at.Status == runstatus.Cancelled {
		fmt.Fprintf(w, "%s reel resume %s\n", key("resume"), at.RunID)
	}
}

func stepLabel(s exectree.StepAt) string {
	if s.Iteration > 0 {
		return fmt.Sprintf("%s [%d]", s.Path, s.Iteration)
	}
	return s.Path
}

func oneLine(s string, n int) string {
	return cut(strings.Join(strings.Fields(s), " "), n)
}
