package main

import (
	"fmt"
	"os"

	"github.com/reelhq/reel/internal/runs"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

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
