package main

import (
	"fmt"
	"os"

	"github.com/reelhq/reel/internal/runstore"
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

func (f *runRefFlags) store() (*runstore.Store, error) {
	storage, err := storageDir(f.storage)
	if err != nil {
		return nil, err
	}
	return runstore.New(storage), nil
}

// resolve turns the arguments (run ids, unique prefixes, file paths) and
// --latest into transcript paths; want is how many the command takes
// (0: any number, at least one).
func (f *runRefFlags) resolve(args []string, want int) ([]string, error) {
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	var paths []string
	if f.latest {
		p, err := st.Latest()
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	for _, a := range args {
		p, err := st.Resolve(a)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	switch {
	case len(paths) == 0:
		return nil, fmt.Errorf("name a run (id, unique prefix or transcript file) or use --latest")
	case want > 0 && len(paths) != want:
		return nil, fmt.Errorf("want %d run(s), got %d", want, len(paths))
	}
	return paths, nil
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
