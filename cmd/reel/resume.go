package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/launch"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

func newResumeCmd() *cobra.Command {
	var (
		refs        runRefFlags
		f           runFlags
		from        string
		wfFile      string
		list        bool
		interactive bool
	)
	cmd := &cobra.Command{
		Use:   "resume RUN|--latest",
		Short: "Continue an interrupted, failed or cancelled run from its transcript",
		Long: `Continue a run where it stopped: steps that completed are not run again, and
their recorded outputs feed the templates of the steps that follow. The new
events go into the run's own transcript, after the old ones: a run.started
with attempt 2 (3, …), the steps that run, one run.completed.

Loops resume at the iteration that did not finish, parallel blocks run only
the branches that did not, and a sub-workflow that did not finish is resumed
in its own transcript. A step that failed is run again unless the run went
on past it (continue_on_error, on_failure, a transition). --from STATE runs
that state's latest execution, and everything recorded after it, again.

The workflow is read again from the file the run recorded (--workflow names
another). A resume refuses, saying why, when a step it would keep has
changed since it ran, or is now another kind of step; --from STATE then
runs it again. Inputs are the recorded ones; --input overrides one.

Exit status as for reel run; 1 when the run cannot be resumed.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeRunIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return listResumable(cmd, refs.storage)
			}
			list, err := refs.resolve(args, 1)
			if err != nil {
				return &exitError{code: exitUser, msg: err.Error()}
			}
			return resumeRun(cmd, list[0].Path, wfFile, from, interactive, &f)
		},
	}
	refs.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "run this state's latest execution, and what was recorded after it, again (AWF's current and previous: the state the run stopped in, the one before it)")
	fl.StringVar(&wfFile, "workflow", "", "read the workflow from `FILE` instead of the file the run recorded")
	fl.StringArrayVarP(&f.inputs, "input", "i", nil, "override a recorded input, `key=value` (repeatable)")
	fl.BoolVarP(&list, "list", "l", false, "list the runs that can be resumed")
	fl.BoolVar(&f.maskSecrets, "mask-secrets", false, "mask secret-looking values in the new events, the display and the audit trail")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON summary of the run on stdout at the end")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print nothing but errors")
	fl.BoolVar(&f.allowDrift, "allow-prompt-drift", false, "resuming a replay: let an agent step whose prompt differs from the recording take its recorded reply")
	fl.BoolVar(&interactive, "interactive", false, "pause before each step that runs")
	fl.StringSliceVarP(&f.breakpoints, "breakpoint", "b", nil, "with --interactive: pause only at these states")
	addOTelRunFlags(cmd, &f.otel)
	addOutputFlag(cmd, &f.stepOutput)
	addFormatFlag(cmd, &f.asJSON, &f.quiet, "only errors, as --quiet")
	addVerboseFlag(cmd)
	_ = cmd.RegisterFlagCompletionFunc("from", completeRunStates)
	return cmd
}

func resumeRun(cmd *cobra.Command, path, wfFile, from string, interactive bool, f *runFlags) error {
	userErr := func(format string, args ...any) error {
		return &exitError{code: exitUser, msg: fmt.Sprintf(format, args...)}
	}
	proj, err := findProject()
	if err != nil {
		return err
	}
	// The new events go where the old ones are: the storage the
	// transcript lives in.
	e := newEngine(proj, filepath.Dir(filepath.Dir(path)), pluginLog(cmd, f.quiet))
	defer e.PluginHost.Close()
	if f.maskSecrets {
		e.Masker = secrets.NewMasker(os.Environ())
	}
	t, err := launch.LoadResume(e, path, wfFile)
	if err != nil {
		if errors.Is(err, launch.ErrResume) {
			return userErr("%v", err)
		}
		if wfFile == "" {
			wfFile = path
		}
		return workflowError(cmd, e.Masker, wfFile, err)
	}
	rec, wf := t.Run, t.Workflow
	given, err := parseInputs(f.inputs)
	if err != nil {
		return &exitError{code: exitUser, msg: e.Masker.MaskString(err.Error())}
	}
	dropUndeclared(cmd, wf, given, f.quiet)
	if len(f.breakpoints) > 0 && !interactive {
		return userErr("--breakpoint needs --interactive")
	}
	opts := engine.ResumeOptions{Inputs: given, From: from, AllowPromptDrift: f.allowDrift, ReplayFrom: t.ReplayFrom}
	if t.ReplayFrom == nil && f.allowDrift {
		return userErr("--allow-prompt-drift goes with the resume of a replay (run --replay-from)")
	}
	if interactive {
		opts.Pause = newPauser(cmd.InOrStdin(), cmd.ErrOrStderr(), f.breakpoints, palette{on: useColor(cmd, cmd.ErrOrStderr())}).pause
	}
	live, err := startLiveExport(cmd, proj, &f.otel, e)
	if err != nil {
		return err
	}
	defer live.finish(cmd.ErrOrStderr(), f.quiet)
	out := &runOutput{json: f.asJSON, quiet: f.quiet, stepOutput: f.stepOutput}
	out.setup(cmd, e)
	if src := rec.Input().Workflow; src != nil && src.SHA256 != wf.SHA256 && !f.quiet {
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: %s changed since run %s started; its recorded steps are checked against it\n", wf.File, rec.RunID)
	}
	opts.OnStart = func(id, p string) {
		if !f.quiet && !f.asJSON {
			fmt.Fprintf(cmd.ErrOrStderr(), "resume %s (attempt %d)\ntranscript %s\n", id, rec.Attempts()+1, p)
		}
	}
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	e.PluginHost.StartSubscribers(ctx)
	rep, err := e.Resume(ctx, wf, rec, opts)
	if errors.Is(err, transcript.ErrLocked) {
		return userErr("run %s is still running: %v", rec.RunID, err)
	}
	return out.finish(cmd, e, wf, rep, err)
}

// newResumeListCmd is AWF's resume-list: reel resume --list.
func newResumeListCmd() *cobra.Command {
	var storage string
	cmd := &cobra.Command{
		Use:   "resume-list",
		Short: "List the runs that can be resumed (reel resume --list)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listResumable(cmd, storage)
		},
	}
	cmd.Flags().StringVar(&storage, "storage", "", storageUsage)
	return cmd
}

// listResumable prints the top-level runs that did not succeed.
func listResumable(cmd *cobra.Command, storage string) error {
	dir, err := storageDir(storage)
	if err != nil {
		return err
	}
	all, err := runs.NewStore(dir, runs.Options{}).All()
	if err != nil {
		return &exitError{code: exitUser, msg: err.Error()}
	}
	var list []runs.Summary
	for _, r := range all {
		s, err := r.Summarize()
		if err != nil || s.ParentRunID != "" || s.Status == runstatus.Success || s.Status == runstatus.Running {
			continue
		}
		list = append(list, s)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Started.After(list[j].Started) })
	out := cmd.OutOrStdout()
	p := palette{on: useColor(cmd, out)}
	t := &table{flexible: 4}
	if p.on {
		t.colour = func(row, col int, cell string) string {
			if row > 0 && col == 2 {
				return p.status(cell)
			}
			return cell
		}
	}
	t.add("RUN ID", "WORKFLOW", "STATUS", "STARTED", "ERROR")
	for _, r := range list {
		t.add(r.RunID, r.Workflow, r.Status, r.Started.Local().Format("2006-01-02 15:04:05"), firstLine(r.Error))
	}
	return t.write(out, termWidth(out))
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i] + " …"
		}
	}
	return s
}
