// The helpers every command shares: where the project and the storage
// are, the price table, the runs a command names, the run index, the
// listing flags, time bounds, JSON output. A command is an options struct
// and a run function in its own file; what it needs from more than one
// other command lives here.

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// findProject finds the project the working directory is in and reads its
// configuration.
func findProject() (*project.Project, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	p, err := project.Find(wd)
	if err != nil {
		return nil, &exitError{code: exitUser, msg: err.Error()}
	}
	return p, nil
}

// priceTable is the price table of the project the working directory is
// in: reel's, with the project's prices key over it.
func priceTable() (*pricing.Table, error) {
	p, err := findProject()
	if err != nil {
		return nil, err
	}
	return p.Prices(), nil
}

// storageUsage documents every command's --storage flag.
const storageUsage = "storage `DIR` (default $REEL_STORAGE, else the project's .reel/storage, else the per-user storage)"

// storageDir is the storage the --storage flag value, the environment and
// the project discovered from the working directory select.
func storageDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	p, err := findProject()
	if err != nil {
		return "", err
	}
	return p.Storage(""), nil
}

// writeJSON prints v as the indented JSON document of a --json output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// listFlags are a listing's --json and -q/--quiet, with AWF's -f/--format
// setting either.
type listFlags struct {
	asJSON, quiet bool
}

// register adds the flags to cmd: quietUsage is --quiet's help, quietMeans
// what -f quiet prints.
func (f *listFlags) register(cmd *cobra.Command, quietUsage, quietMeans string) {
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, quietUsage)
	addFormatFlag(cmd, &f.asJSON, &f.quiet, quietMeans)
}

// runRefFlags are the flags every transcript-reading command shares: where
// the storage is and whether to take the latest run.
type runRefFlags struct {
	storage string
	latest  bool
}

func (f *runRefFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.storage, "storage", "", storageUsage)
	cmd.Flags().BoolVar(&f.latest, "latest", false, "read the most recent run")
}

// store is the run store of the storage the flags name.
func (f *runRefFlags) store() (*runs.Store, error) {
	storage, err := storageDir(f.storage)
	if err != nil {
		return nil, err
	}
	return runs.NewStore(storage, runs.Options{}), nil
}

// resolve opens the runs the arguments (run ids, unique prefixes, file
// paths) and --latest name; want is how many the command takes (0: any
// number, at least one). Each keeps its own warnings (Run.Warnings).
func (f *runRefFlags) resolve(args []string, want int) ([]*runs.Run, error) {
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	var list []*runs.Run
	if f.latest {
		r, err := st.Latest()
		if err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	for _, a := range args {
		r, err := st.Find(a)
		if err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	switch {
	case len(list) == 0:
		return nil, fmt.Errorf("name a run (id, unique prefix or transcript file) or use --latest")
	case want > 0 && len(list) != want:
		return nil, fmt.Errorf("want %d run(s), got %d", want, len(list))
	}
	return list, nil
}

// reportWarnings prints problems met while reading to stderr and turns
// them into exit status 1, after the output holds whatever could be read.
func reportWarnings(cmd *cobra.Command, warnings []string) error {
	if len(warnings) == 0 {
		return nil
	}
	w := cmd.ErrOrStderr()
	for _, m := range warnings {
		fmt.Fprintf(w, "reel: warning: %s\n", m)
	}
	return &exitError{code: 1, msg: "problems reading the transcript (above); the output holds what could be read"}
}

// isTerminal reports whether w (a reader or a writer) is a terminal. A
// character device is not enough: /dev/null is one.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
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

// tree is the priced execution tree of the one run the arguments and flags
// name (reel tree, reel status).
func (f *runRefFlags) tree(args []string) (*runs.Run, *exectree.Tree, error) {
	list, err := f.resolve(args, 1)
	if err != nil {
		return nil, nil, err
	}
	prices, err := priceTable()
	if err != nil {
		return nil, nil, err
	}
	tree, err := exectree.Build(list[0], exectree.Options{Prices: prices})
	return list[0], tree, err
}

// parseWhen reads a time bound: RFC 3339, a date, or a duration before now.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time (RFC 3339, 2006-01-02) or a duration (15m)", s)
}
