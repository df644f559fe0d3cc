package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/safefile"
)

func newRunsCmd() *cobra.Command {
	var (
		storage      string
		asJSON       bool
		quiet, stats bool
		f            index.Filter
		since, until string
	)
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now()
			var err error
			f.Status = runstatus.FromAWF(f.Status)
			if f.Since, err = parseWhen(since, now); err != nil {
				return fmt.Errorf("--since: %w", err)
			}
			if f.Until, err = parseWhen(until, now); err != nil {
				return fmt.Errorf("--until: %w", err)
			}
			if f.Status != "" && !runstatus.Valid(f.Status) {
				return fmt.Errorf("--status %q: want one of %s", f.Status, strings.Join(runstatus.All, ", "))
			}
			if f.Limit < 0 {
				return fmt.Errorf("--limit must be 0 (all) or more")
			}
			ix, err := openIndex(cmd, storage)
			if err != nil {
				return err
			}
			defer ix.Close()
			limit := f.Limit
			var runs []index.Run
			for {
				f.Limit = 1000
				if limit > 0 {
					f.Limit = min(1000, limit-len(runs))
				}
				page, err := ix.List(cmd.Context(), f)
				if err != nil {
					return err
				}
				runs = append(runs, page.Runs...)
				if page.Next == "" || limit > 0 && len(runs) >= limit {
					break
				}
				f.After = page.Next
			}
			out := cmd.OutOrStdout()
			switch {
			case stats && asJSON:
				return writeJSON(out, tallyRuns(runs))
			case stats:
				return writeTally(out, tallyRuns(runs))
			case asJSON:
				return writeJSON(out, runs)
			case quiet:
				for _, r := range runs {
					fmt.Fprintln(out, r.RunID)
				}
				return nil
			}
			return writeRuns(out, runs, palette{on: useColor(cmd, out)}, termWidth(out))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&storage, "storage", "", storageUsage)
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	fl.StringVarP(&f.Workflow, "workflow", "w", "", "only runs of this workflow")
	fl.StringVarP(&f.Status, "status", "s", "", "only runs in this status ("+strings.Join(runstatus.All, ", ")+"; AWF's completed and failed too)")
	fl.StringVar(&f.Provider, "provider", "", "only runs with an agent step of this provider")
	fl.StringVar(&f.Model, "model", "", "only runs with an agent step of this model")
	fl.StringVar(&since, "since", "", "only runs started at or after this time (RFC 3339, 2006-01-02, or a duration ago: 24h)")
	fl.StringVar(&until, "until", "", "only runs started before this time")
	fl.IntVarP(&f.Limit, "limit", "n", 0, "at most this many runs (0: all)")
	fl.BoolVarP(&quiet, "quiet", "q", false, "print only the run ids, one a line")
	fl.BoolVar(&stats, "stats", false, "print only the runs' count in each status, average duration, tokens and cost")
	addFormatFlag(cmd, &asJSON, &quiet, "only the run ids, as --quiet")
	cmd.MarkFlagsMutuallyExclusive("stats", "quiet")
	return cmd
}

// runTally is what runs --stats prints.
type runTally struct {
	Runs     int            `json:"runs"`
	ByStatus map[string]int `json:"by_status"`
	// AvgDurationMS is over the runs that ended.
	AvgDurationMS int64 `json:"avg_duration_ms"`
	Tokens        int64 `json:"tokens"`
	// CostUSD adds the runs with a known cost; PricedRuns counts them.
	CostUSD    float64 `json:"cost_usd"`
	PricedRuns int     `json:"priced_runs"`
}

func tallyRuns(runs []index.Run) runTally {
	t := runTally{Runs: len(runs), ByStatus: map[string]int{}}
	for _, s := range runstatus.All {
		t.ByStatus[s] = 0
	}
	var total time.Duration
	ended := 0
	for _, r := range runs {
		t.ByStatus[r.Status]++
		t.Tokens += r.Tokens
		if r.CostUSD != nil {
			t.CostUSD += *r.CostUSD
			t.PricedRuns++
		}
		if runstatus.Ended(r.Status) {
			total += time.Duration(r.DurationMS) * time.Millisecond
			ended++
		}
	}
	if ended > 0 {
		t.AvgDurationMS = (total / time.Duration(ended)).Milliseconds()
	}
	return t
}

func writeTally(out io.Writer, t runTally) error {
	var b strings.Builder
	fmt.Fprintf(&b, "runs          %d\n", t.Runs)
	for _, s := range runstatus.All {
		fmt.Fprintf(&b, "%-13s %d\n", s, t.ByStatus[s])
	}
	fmt.Fprintf(&b, "avg duration  %s\n", time.Duration(t.AvgDurationMS)*time.Millisecond)
	fmt.Fprintf(&b, "tokens        %d\n", t.Tokens)
	cost := "-"
	if t.PricedRuns > 0 {
		cost = fmt.Sprintf("$%.4f (%d of %d runs priced)", t.CostUSD, t.PricedRuns, t.Runs)
	}
	fmt.Fprintf(&b, "cost          %s\n", cost)
	_, err := io.WriteString(out, b.String())
	return err
}

// writeRuns prints the runs as a table fitting width (0: any), statuses
// coloured by p.
func writeRuns(out io.Writer, runs []index.Run, p palette, width int) error {
	t := &table{flexible: 1}
	if p.on {
		t.colour = func(row, col int, cell string) string {
			if row > 0 && col == 2 {
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
		cost := "-"
		if r.CostUSD != nil {
			cost = fmt.Sprintf("$%.4f", *r.CostUSD)
		}
		started := r.Started.Local().Format("2006-01-02 15:04:05")
		if r.Started.IsZero() || r.Started.Unix() == 0 {
			// No run.started: the file is empty (the run was stopped
			// before its first event) or holds no event.
			started, dur = "-", "-"
			if name == "" {
				name = "(no events)"
			}
		}
		t.add(r.RunID, name, r.Status, started, dur, fmt.Sprint(r.Usage.TotalTokens), cost)
	}
	return t.write(out, width)
}

// openIndex opens the run index of the storage the flag, the environment
// and the project select, up to date with its transcripts.
func openIndex(cmd *cobra.Command, storageFlag string) (*index.Index, error) {
	storage, err := storageDir(storageFlag)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(storage); err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("no storage at %s (set --storage or REEL_STORAGE, or run reel inside a project)", storage)}
	}
	return openIndexPriced(cmd, storage)
}

// openIndexPriced opens the run index of storage with the project's price
// table, so the run list prices tokens as reel stats and reel tree do.
func openIndexPriced(cmd *cobra.Command, storage string) (*index.Index, error) {
	if err := checkIndex(storage); err != nil {
		return nil, err
	}
	prices, err := priceTable()
	if err != nil {
		return nil, err
	}
	return index.Open(cmd.Context(), storage, index.WithPrices(prices), repairNotice(cmd))
}

// repairNotice has the index say, on stderr, that it found its file damaged
// and rebuilt it from the transcripts.
func repairNotice(cmd *cobra.Command) index.Option {
	return index.OnRepair(func(damage error) {
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %v: rebuilt from the transcripts\n", damage)
	})
}

// checkIndex refuses a run index whose files are not plain files: SQLite
// would write through a planted symlink, or block on a FIFO.
func checkIndex(storage string) error {
	if err := safefile.CheckPlain(index.Files(storage)...); err != nil {
		return fmt.Errorf("run index: %w (remove it: reel builds the index again from the transcripts)", err)
	}
	return nil
}

// indexWritten brings an existing run index up to date with transcripts a
// command just wrote (paths: files appended to; new files are found by the
// directory check). Without an index it does nothing: the next reader
// builds one. Failing to update is a warning: the transcripts are written
// and the next reader catches up.
func indexWritten(cmd *cobra.Command, storage string, paths ...string) {
	if _, err := os.Stat(index.Path(storage)); err != nil {
		return
	}
	ix, err := openIndexPriced(cmd, storage)
	if err == nil {
		if _, err = ix.Update(cmd.Context(), paths...); err == nil {
			err = ix.Sync(cmd.Context())
		}
		ix.Close()
	}
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: run index not updated: %v\n", err)
	}
}
