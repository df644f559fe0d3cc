package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

func newRunCmd() *cobra.Command {
	var (
		inputs       []string
		storage      string
		noTranscript bool
		maskSecrets  bool
	)
	cmd := &cobra.Command{
		Use:   "run FILE|NAME",
		Short: "Run a workflow and record it as a transcript",
		Long: `Run a workflow file, or a workflow found by name in .reel/workflows/.

The display goes to stdout; the run id and transcript path go to stderr.
Agent steps in mode: conversation read the user's messages from stdin, a
line each (an empty line, exit, quit or the end of input ends them).
The exit status is the run's: 0 on success, the failing state's status
otherwise, 130 when cancelled (Ctrl-C or SIGTERM).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := findProject()
			if err != nil {
				return err
			}
			e := newEngine(proj, storage)
			e.NoTranscript = noTranscript
			e.Display = cmd.OutOrStdout()
			e.Stdin = cmd.InOrStdin()
			if maskSecrets {
				e.Masker = transcript.NewMasker(os.Environ())
			}
			wf, err := loadWorkflow(cmd, e, proj.Root, args[0])
			if err != nil {
				return err
			}
			// Input values are secrets as often as anything: what reel
			// says about them is masked too.
			given, err := parseInputs(inputs)
			if err != nil {
				return &exitError{code: 2, msg: e.Masker.MaskString(err.Error())}
			}

			// Only this handler cancels the run, so that run.completed can
			// name the signal.
			ctx, cancel := context.WithCancelCause(context.WithoutCancel(cmd.Context()))
			defer cancel(nil)
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			go func() {
				select {
				case s := <-sigs:
					cancel(fmt.Errorf("received %s", sigName(s)))
				case <-ctx.Done():
				}
			}()

			id := transcript.NewRunID()
			errw := cmd.ErrOrStderr()
			fmt.Fprintf(errw, "run %s\n", id)
			if !noTranscript {
				fmt.Fprintf(errw, "transcript %s\n", filepath.Join(transcript.Dir(e.Storage), id+".jsonl"))
			}
			rep, err := e.Run(ctx, wf, engine.RunOptions{Inputs: given, RunID: id})
			if err != nil {
				// bad inputs (*engine.InputError) or unwritable storage
				return &exitError{code: 2, msg: e.Masker.MaskString(err.Error())}
			}
			if !noTranscript {
				indexWritten(cmd, e.Storage, filepath.Join(transcript.Dir(e.Storage), id+".jsonl"))
			}
			if rep.RecordError != nil {
				fmt.Fprintf(errw, "reel: warning: transcript incomplete: %s\n", e.Masker.MaskString(rep.RecordError.Error()))
			}
			if rep.ExitCode != 0 {
				return &exitError{code: rep.ExitCode}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&inputs, "input", "i", nil, "workflow input `key=value` (repeatable)")
	cmd.Flags().StringVar(&storage, "storage", "", storageUsage)
	cmd.Flags().BoolVar(&noTranscript, "no-transcript", false, "do not write a transcript (the audit trail and display are unchanged)")
	cmd.Flags().BoolVar(&maskSecrets, "mask-secrets", false, "mask secret-looking environment values and key shapes in the transcript, the display and the audit trail")
	return cmd
}

func sigName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// newEngine configures an engine for the project (its configured plugins)
// and the storage flag.
func newEngine(p *project.Project, storage string) *engine.Engine {
	return &engine.Engine{Storage: p.Storage(storage), ProjectDir: p.Root, Plugins: p.Config.Plugins, NotifyBackend: p.Config.Notify.DefaultBackend}
}

// findProject finds the project the working directory is in and reads its
// configuration.
func findProject() (*project.Project, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	p, err := project.Find(wd)
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	return p, nil
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

// loadWorkflow finds ref by path (relative to the working directory) or by
// name in the project's workflow directories and loads it, printing every
// problem of an invalid file.
func loadWorkflow(cmd *cobra.Command, e *engine.Engine, projectRoot, ref string) (*workflow.Workflow, error) {
	path, err := workflow.Find(ref, ".", projectRoot)
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	wf, err := workflow.Load(path, e.LoadOptions())
	var probs workflow.Problems
	if errors.As(err, &probs) {
		for _, p := range probs {
			fmt.Fprintln(cmd.ErrOrStderr(), e.Masker.MaskString(p.String()))
		}
		return nil, &exitError{code: 2, msg: e.Masker.MaskString(fmt.Sprintf("%s: %d problem(s)", path, len(probs)))}
	}
	if err != nil {
		return nil, &exitError{code: 2, msg: e.Masker.MaskString(err.Error())}
	}
	for _, w := range wf.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), e.Masker.MaskString(w.String()))
	}
	return wf, nil
}

func parseInputs(kvs []string) (map[string]string, error) {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--input %q: want key=value", kv)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("--input %s given twice", k)
		}
		m[k] = v
	}
	return m, nil
}
