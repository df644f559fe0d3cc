package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/runstatus"
)

// runsOptions are the flags of `reel runs`.
type runsOptions struct {
	storage string
	listFlags
	stats        bool
	filter       index.Filter
	since, until string
}

func newRunsCmd() *cobra.Command {
	var o runsOptions
	cmd := &cobra.Command{
		Use:     "runs",
		Aliases: []string{"history"},
		Short:   "List the runs in the storage, newest first (history)",
		Long: `List the runs in the storage, newest first: id, workflow, status, start,
duration, tokens and cost. Child runs (sub-workflows) are marked with ↳.

Statuses: ` + strings.Join(runstatus.All, ", ") + `.

--stats prints only how many runs there are in each status, their average
duration, tokens and cost. reel history is reel runs, with AWF's history
flags (-w, -s with AWF's status names too, -n, --stats, -f).

The list comes from the run index (<storage>/index.db), which is brought up
to date with the transcripts first; reel index --rebuild rebuilds it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRuns(cmd, &o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.storage, "storage", "", storageUsage)
	fl.StringVarP(&o.filter.Workflow, "workflow", "w", "", "only runs of this workflow")
	fl.StringVarP(&o.filter.Status, "status", "s", "", "only runs in this status ("+strings.Join(runstatus.All, ", ")+"; AWF's completed and failed too)")
	fl.StringVar(&o.filter.Provider, "provider", "", "only runs with an agent step of this provider")
	fl.StringVar(&o.filter.Model, "model", "", "only runs with an agent step of this model")
	fl.StringVar(&o.since, "since", "", "only runs started at or after this time (RFC 3339, 2006-01-02, or a duration ago: 24h)")
	fl.StringVar(&o.until, "until", "", "only runs started before this time")
	fl.IntVarP(&o.filter.Limit, "limit", "n", 0, "at most this many runs (0: all)")
	fl.BoolVar(&o.stats, "stats", false, "print only the runs' count in each status, average duration, tokens and cost")
	o.register(cmd, "print only the run ids, one a line", "only the run ids, as --quiet")
	cmd.MarkFlagsMutuallyExclusive("stats", "quiet")
	return cmd
}

// parse checks the filter the flags give, the times read as of now.
func (o *runsOptions) parse(now time.Time) (index.Filter, error) {
	f := o.filter
	var err error
	f.Status = runstatus.FromAWF(f.Status)
	if f.Since, err = parseWhen(o.since, now); err != nil {
		return f, fmt.Errorf("--since: %w", err)
	}
	if f.Until, err = parseWhen(o.until, now); err != nil {
		return f, fmt.Errorf("--until: %w", err)
	}
	if f.Status != "" && !runstatus.Valid(f.Status) {
		return f, fmt.Errorf("--status %q: want one of %s", f.Status, strings.Join(runstatus.All, ", "))
	}
	if f.Limit < 0 {
		return f, fmt.Errorf("--limit must be 0 (all) or more")
	}
	return f, nil
}

func runRuns(cmd *cobra.Command, o *runsOptions) error {
	f, err := o.parse(time.Now())
	if err != nil {
		return err
	}
	ix, err := openIndex(cmd, o.storage)
	if err != nil {
		return err
	}
	defer ix.Close()
	runs, err := ix.ListAll(cmd.Context(), f, f.Limit)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	switch {
	case o.stats && o.asJSON:
		return writeJSON(out, index.TallyRuns(runs))
	case o.stats:
		return writeTally(out, index.TallyRuns(runs))
	case o.asJSON:
		return writeJSON(out, runs)
	case o.quiet:
		for _, r := range runs {
			fmt.Fprintln(out, r.RunID)
		}
		return nil
	}
	return writeRuns(out, runs, palette{on: useColor(cmd, out)}, termWidth(out))
}

func writeTally(out io.Writer, t *index.Tally) error {
	var b strings.Builder
	fmt.Fprintf(&b, "runs          %d\n", t.Runs)
	for _, s := range runstatus.All {
		fmt.Fprintf(&b, "%-13s %d\n", s, t.ByStatus[s])
	}
	fmt.Fprintf(&b, "avg duration  %s\n", time.Duration(t.AvgDurationMS)*time.Millisecond)
	fmt.Fprintf(&b, "tokens        %d\n", t.Tokens)
	cost := t.Cost().String()
	if t.PricedRuns > 0 {
		cost += fmt.Sprintf(" (%d of %d runs priced)", t.PricedRuns, t.Runs)
	}
	fmt.Fprintf(&b, "cost          %s\n", cost)
	_, err := io.WriteString(out, b.String())
	return err
}

// writeRuns prints the runs as a table fitting width (0: any), statuses
// coloured by p.
func writeRuns(out io.Writer, runs []index.Run, p palette, width int) error {
	// narrow: ids cut to 8 first, then the started time, the duration
	// and the tokens go; the status and the cost stay
	t := &table{flexible: 1, ids: []int{0}, drop: []int{3, 4, 5}}
	if p.on {
		t.colour = func(row, col int, cell string) string {
			if row > 0 && t.rows[0][col] == "STATUS" {
				return p.status(cell)
			}
			return cell
		}
	}
	t.add("RUN ID", "WORKFLOW", "STATUS", "STARTED", "DURATION", "TOKENS", "COST")
	for _, r := range runs {
		name := r.Workflow
		if r.ParentRunID != "" {
			name = "↳ " + name
		}
		dur := (time.Duration(r.DurationMS) * time.Millisecond).String()
		if r.Status == runstatus.Running {
			dur += " so far"
		}
		cost := r.Cost().String()
		started := r.Started.Local().Format("2006-01-02 15:04:05")
		switch {
		case r.Started.IsZero() || r.Started.Unix() == 0:
			// No run.started: the file is empty (the run was stopped
			// before its first event) or holds no event.
			started, dur = "-", "-"
			if name == "" {
				name = "(no events)"
			}
		case r.Untimed:
			// An imported recording without times: listed where its
			// file's mtime puts it, but when it ran is not known.
			started, dur = "—", "—"
		}
		t.add(r.RunID, name, r.Status, started, dur, fmt.Sprint(r.Usage.TotalTokens), cost)
	}
	return t.write(out, width)
}
