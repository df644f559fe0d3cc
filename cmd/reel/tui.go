package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/importer"
	"github.com/reelhq/reel/internal/launch"
	"github.com/reelhq/reel/internal/tui"
	"github.com/reelhq/reel/transcript"
)

// tuiOptions are reel tui's flags.
type tuiOptions struct {
	storage string
}

func newTUICmd() *cobra.Command {
	var o tuiOptions
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Browse, launch and watch workflows and runs in the terminal, live",
		Long: `Open a terminal dashboard over the project and its storage, with AWF's five
tabs and keys (1-5, Tab and Shift-Tab switch; q quits):

  1 Workflows      local, global and pack workflows: f filters, ? details,
                   v validates, Enter launches with an input form
  2 Monitoring     every running run of the storage, whoever started it,
                   followed live from its transcript: the execution tree,
                   tokens and cost, the selected step's output and agent
                   exchange, the failed step selected; Ctrl-C cancels
  3 History        the run index: f filters, / searches every event, Enter
                   opens a run, m then d diffs two runs side by side
  4 Conversations  a run's exchange as Markdown, thinking and tool
                   results folded (t, o)
  5 External logs  a live tail of Claude Code, Codex and Gemini CLI
                   session files; i imports the session as a run

Runs started here are ordinary runs of the storage; quitting cancels the
ones still going (reel resume continues them). NO_COLOR turns colours off.
See docs/tui.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTUI(cmd, &o) },
	}
	cmd.Flags().StringVar(&o.storage, "storage", "", storageUsage)
	return cmd
}

func runTUI(cmd *cobra.Command, o *tuiOptions) error {
	if !isTerminal(os.Stdin) || !isTerminal(os.Stdout) {
		return &exitError{code: exitUser, msg: "reel tui needs a terminal (its input and output are not one): use reel runs, reel tail -f or reel serve instead"}
	}
	proj, err := findProject()
	if err != nil {
		return err
	}
	dir, err := storageDir(o.storage)
	if err != nil {
		return err
	}
	// Nothing may write to the terminal but the TUI: the engine's display
	// and the plugins' logs are off.
	e := newEngine(proj, dir, nil)
	defer e.PluginHost.Close()
	l := launch.New(launch.Config{Engine: e, Defaults: proj.Config.Inputs})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		l.Close(ctx, errors.New("reel tui quit"))
	}()
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGHUP)
	defer stop()
	return tui.Run(ctx, tui.Config{
		Launcher: l,
		Prices:   proj.Prices(),
		NoColor:  !useColor(cmd, os.Stdout),
		Import: func(ctx context.Context, path string) (string, error) {
			got, _, err := importer.Import(ctx, []string{path}, importer.Options{Dir: transcript.Dir(dir)})
			switch {
			case err != nil:
				return "", err
			case len(got) != 1:
				return "", fmt.Errorf("%s: %d runs where one was expected", path, len(got))
			case got[0].Error != "":
				return "", errors.New(got[0].Error)
			}
			return got[0].RunID, nil
		},
	})
}
