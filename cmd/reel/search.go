package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/importer"
	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/transcript"
)

func newIndexCmd() *cobra.Command {
	var (
		storage string
		rebuild bool
	)
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Bring the run index up to date with the transcripts (or --rebuild it)",
		Long: `The run index (<storage>/index.db, SQLite) makes reel runs, reel search and
reel serve fast. It is derived from the transcripts alone and kept up to date
by every command that reads it; this command compares every transcript with
the index and indexes what changed. --rebuild deletes the index and builds it
again from the transcripts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := storageDir(storage)
			if err != nil {
				return err
			}
			if _, err := os.Stat(dir); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("no storage at %s", dir)}
			}
			if err := checkIndex(dir); err != nil {
				return err
			}
			// Imports killed mid-way left their staging directories.
			swept, err := importer.Sweep(transcript.Dir(dir))
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %v\n", err)
			}
			if swept > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "removed %d staging director%s left by killed imports\n", swept, map[bool]string{true: "y", false: "ies"}[swept == 1])
			}
			start := time.Now()
			var st index.Stats
			var ix *index.Index
			prices, err := priceTable()
			if err != nil {
				return err
			}
			if rebuild {
				ix, st, err = index.Rebuild(cmd.Context(), dir, index.WithPrices(prices))
			} else {
				ix, st, err = index.OpenScan(cmd.Context(), dir, index.WithPrices(prices), repairNotice(cmd))
			}
			if err != nil {
				return err
			}
			defer ix.Close()
			took := time.Since(start)
			fmt.Fprintf(cmd.OutOrStdout(), "indexed %d transcript(s), %.1f MB in %s (%.0f MB/s); %d removed\n",
				st.Files, float64(st.Bytes)/1e6, took.Round(time.Millisecond), float64(st.Bytes)/1e6/max(took.Seconds(), 1e-6), st.Removed)
			if st.Skipped > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "reel: %d line(s) over the %d MB line limit left out of the index (no reader uses them; reel verify names them)\n", st.Skipped, transcript.DefaultMaxLineSize>>20)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&storage, "storage", "", storageUsage)
	cmd.Flags().BoolVar(&rebuild, "rebuild", false, "delete the index and build it again from the transcripts")
	return cmd
}

// searchOptions are the flags of `reel search`.
type searchOptions struct {
	storage, color string
	limit          int
	asJSON         bool
}

func newSearchCmd() *cobra.Command {
	var o searchOptions
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Find events across all runs by their text (the terminal twin of reel serve's /search)",
		Long: fmt.Sprintf(`Search prompts, replies, thinking, tool inputs and outputs, commands and their
output across every run in the storage, newest first. Each hit names the run,
the step path, the event's seq and type, and shows the text around the match.

  word        the word, any case ("read_file" means the words read file, adjacent)
  pre*        a word starting with pre
  "two words" the words next to each other
  -word       leave out events holding the word

Every word must occur in the same event. A query holds at most %d bytes and
%d words. Exit status 1 when nothing matches, 2 for a query refused.`, index.MaxQueryBytes, index.MaxQueryWords),
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSearch(cmd, strings.Join(args, " "), &o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.storage, "storage", "", storageUsage)
	fl.IntVarP(&o.limit, "limit", "n", 50, "at most this many hits")
	fl.BoolVar(&o.asJSON, "json", false, "print the hits as JSON")
	fl.StringVar(&o.color, "color", "auto", "highlight matches: auto (on a terminal, unless NO_COLOR), always or never")
	return cmd
}

// searchBudget bounds the time one page of a search spends checking
// candidates.
const searchBudget = 2 * time.Second

func runSearch(cmd *cobra.Command, q string, o *searchOptions) error {
	if _, err := index.ParseQuery(q); err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	ix, err := openIndex(cmd, o.storage)
	if err != nil {
		return err
	}
	defer ix.Close()
	if o.limit <= 0 {
		return fmt.Errorf("--limit must be above 0")
	}
	out := cmd.OutOrStdout()
	colour, err := colorFlag(cmd, out, o.color)
	if err != nil {
		return err
	}
	hits, err := ix.SearchAll(cmd.Context(), q, o.limit, searchBudget)
	switch {
	case errors.Is(err, index.ErrQueryTooCostly) && len(hits) > 0:
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: search stopped after %d hit(s): %v\n", len(hits), err)
	case errors.Is(err, index.ErrQueryTooCostly):
		return &exitError{code: 2, msg: err.Error()}
	case err != nil:
		return err
	}
	if o.asJSON {
		if err := writeJSON(out, hits); err != nil {
			return err
		}
	} else {
		writeHits(out, hits, palette{on: colour})
	}
	if len(hits) == 0 {
		return &exitError{code: 1}
	}
	return nil
}

// writeHits prints each hit's place on one line and its snippet, matches
// highlighted, on the next.
func writeHits(out io.Writer, hits []index.Hit, p palette) {
	var bold, dim, reset string
	if p.on {
		bold, dim, reset = "\x1b[1;33m", "\x1b[2m", "\x1b[0m"
	}
	for _, h := range hits {
		path := h.Path
		if path == "" {
			path = "(run)"
		}
		fmt.Fprintf(out, "%s%s  %s  %s  #%d %s  %s%s\n", dim, h.RunID, h.Workflow, path, h.Seq, h.Type, h.Time.Local().Format("2006-01-02 15:04:05"), reset)
		var b strings.Builder
		for _, s := range h.Snippet {
			if s.Match {
				b.WriteString(bold + s.Text + reset)
			} else {
				b.WriteString(s.Text)
			}
		}
		fmt.Fprintf(out, "    %s\n", b.String())
	}
}
