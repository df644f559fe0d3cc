package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/errcode"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// runFlags are the flags of reel run (resume shares the output ones).
type runFlags struct {
	inputs       []string
	storage      string
	noTranscript bool
	maskSecrets  bool
	asJSON       bool
	quiet        bool
	dryRun       bool
	step         string
	mocks        []string
	interactive  bool
	breakpoints  []string
	replayFrom   string
	allowDrift   bool
	otel         otelFlags
	plugins      pluginCheck
	// stepOutput is --output: how the display shows steps' output.
	stepOutput engine.StepOutput
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run FILE|NAME",
		Short: "Run a workflow and record it as a transcript",
		Long: `Run a workflow file, or a workflow found by name in .reel/workflows/ or
.awf/workflows/. reel run NAME --help lists the workflow's inputs.

Inputs come from --input key=value (an array input takes a JSON array or
comma-separated values; key=@prompts/PATH reads a prompt file from
.reel/prompts or .awf/prompts, as AWF does), else from the inputs of .awf/config.yaml and
.reel/config.yaml, else from the workflow's defaults. Required inputs given
by none of these are asked for on a terminal, and are an error otherwise.

The display goes to stdout; the run id and transcript path go to stderr once
the run has started (a run refused before it starts prints neither), with
the workflow's warnings. Agent steps in mode: conversation read the user's
messages from stdin, a line each (an empty line, exit, quit or the end of
input ends them). With --json the display goes to stderr and stdout gets
one summary object at the end.

--replay-from RUN runs the workflow again with every agent step's replies,
tool calls and usage taken from the recorded run instead of its provider,
while command steps run for real; an agent step whose prompt differs from
the recording fails with a diff of the two unless --allow-prompt-drift.
Before the run, states that use an AWF plugin's operation or step type are
checked against the plugin (warnings) and the validator plugins run (their
errors refuse the run, exit status 2; --skip-plugins skips them); the
plugins that subscribe to events hear the run (docs/plugins.md).
--dry-run prints the plan and runs nothing. --step NAME runs one state alone,
--mock states.X.Output=VALUE standing in for what it reads. --interactive
pauses before every step (or only at --breakpoint states) to continue, skip
or abort.

Exit status (AWF's): 0 success, 1 user error (a bad flag or input, an
unknown workflow, a variable of the workflow's env unset), 2 invalid
workflow, 3 the run failed, 4 system error; 130 when cancelled. An inline
on_failure with a status exits with that status.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorkflows,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWorkflow(cmd, args[0], &f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.inputs, "input", "i", nil, "workflow input `key=value` (repeatable)")
	fl.StringVar(&f.storage, "storage", "", storageUsage)
	fl.BoolVar(&f.noTranscript, "no-transcript", false, "do not write a transcript (the audit trail and display are unchanged)")
	fl.BoolVar(&f.maskSecrets, "mask-secrets", false, "mask secret-looking environment values and key shapes in the transcript, the display and the audit trail")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON summary of the run on stdout at the end (the display goes to stderr)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print nothing but errors")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the execution plan with resolved commands and prompts; run nothing")
	fl.StringVarP(&f.step, "step", "s", "", "run only this state (with its children when it is a block)")
	fl.StringArrayVarP(&f.mocks, "mock", "m", nil, "with --step: a result the step reads, `states.X.FIELD=value` or loop.FIELD=value (repeatable)")
	fl.BoolVar(&f.interactive, "interactive", false, "pause before each step: continue, skip, abort or inspect")
	fl.StringSliceVarP(&f.breakpoints, "breakpoint", "b", nil, "with --interactive: pause only at these states (names or paths, comma-separated)")
	fl.StringVar(&f.replayFrom, "replay-from", "", "take agent replies from this recorded `RUN` instead of calling providers")
	fl.BoolVar(&f.allowDrift, "allow-prompt-drift", false, "with --replay-from: replay agent steps whose prompt differs from the recording")
	addOTelRunFlags(cmd, &f.otel)
	addOutputFlag(cmd, &f.stepOutput)
	addFormatFlag(cmd, &f.asJSON, &f.quiet, "only errors, as --quiet")
	addPluginCheckFlags(cmd, &f.plugins, false)
	addVerboseFlag(cmd)
	cmd.MarkFlagsMutuallyExclusive("dry-run", "interactive")
	cmd.SetHelpFunc(workflowHelp(cmd.HelpFunc()))
	return cmd
}

func runWorkflow(cmd *cobra.Command, ref string, f *runFlags) error {
	proj, err := findProject()
	if err != nil {
		return err
	}
	e := newEngine(proj, f.storage, pluginLog(cmd, f.quiet))
	defer e.PluginHost.Close()
	e.NoTranscript = f.noTranscript
	e.Stdin = cmd.InOrStdin()
	if f.maskSecrets {
		// Inputs whose names say secret (--input api_token=…) are masked
		// like such environment variables.
		e.Masker = secrets.NewMasker(append(os.Environ(), f.inputs...))
	}
	wf, err := loadWorkflow(cmd, e, ref)
	if err != nil {
		return err
	}
	if !f.quiet {
		// What loads but does not do what it seems to (AWF's ignored
		// keys, unchecked references) is said before anything runs.
		hints := hintsOff(cmd)
		for _, w := range wf.Warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), e.Masker.MaskString(hints(w.String())))
		}
	}
	if !f.dryRun {
		// What the workflow asks of AWF plugins, and what the validator
		// plugins say of it, before anything runs.
		f.plugins.quiet = f.quiet
		if n := f.plugins.run(cmd.Context(), e, wf, cmd.ErrOrStderr()); n > 0 {
			return &exitError{code: exitWorkflow, msg: fmt.Sprintf("%s: %d problem(s)", wf.File, n)}
		}
	}
	// Input values are secrets as often as anything: what reel says about
	// them is masked too.
	userErr := func(err error) error {
		return codedError(errcode.UserInputValidationFailed, e.Masker.MaskString(err.Error()), nil)
	}
	given, err := parseInputs(f.inputs)
	if err != nil {
		return userErr(err)
	}
	dropUndeclared(cmd, wf, given, f.quiet)
	if err := resolvePromptInputs(given, proj.Root, os.Getenv); err != nil {
		return codedError(errcode.UserInputMissingFile, e.Masker.MaskString(err.Error()), nil, "reel config show lists the prompts directories")
	}
	configInputs(wf, proj.Config, given)
	mocks, err := parseMocks(f.mocks)
	if err != nil {
		return userErr(err)
	}
	if err := askInputs(cmd, wf, given); err != nil {
		return err
	}
	if f.dryRun {
		plan, err := e.Plan(cmd.Context(), wf, given)
		if cmd.Context().Err() != nil {
			return errInterrupted
		}
		if err != nil {
			return userErr(err)
		}
		if f.asJSON {
			return writeJSON(cmd.OutOrStdout(), plan)
		}
		return writePlan(cmd.OutOrStdout(), plan, palette{on: useColor(cmd, cmd.OutOrStdout())})
	}
	opts := engine.RunOptions{Inputs: given, Step: f.step, Mocks: mocks, AllowPromptDrift: f.allowDrift}
	if f.replayFrom != "" {
		rec, err := loadRun(f.storage, f.replayFrom, rerun.Options{Exchange: true})
		if err != nil {
			return userErr(fmt.Errorf("--replay-from: %w", err))
		}
		opts.ReplayFrom = rec
	} else if f.allowDrift {
		return userErr(errors.New("--allow-prompt-drift needs --replay-from"))
	}
	if len(f.breakpoints) > 0 && !f.interactive {
		return userErr(errors.New("--breakpoint needs --interactive"))
	}
	if f.interactive {
		opts.Pause = newPauser(cmd.InOrStdin(), cmd.ErrOrStderr(), f.breakpoints, palette{on: useColor(cmd, cmd.ErrOrStderr())}).pause
	}
	live, err := startLiveExport(cmd, proj, &f.otel, e)
	if err != nil {
		return err
	}
	defer live.finish(cmd.ErrOrStderr(), f.quiet)
	out := &runOutput{json: f.asJSON, quiet: f.quiet, noTranscript: f.noTranscript, stepOutput: f.stepOutput}
	out.setup(cmd, e)
	opts.OnStart = out.started
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	e.PluginHost.StartSubscribers(ctx)
	rep, err := e.Run(ctx, wf, opts)
	return out.finish(cmd, e, wf, rep, err)
}

// signalContext is cancelled, with the signal's name as its cause, by
// SIGINT or SIGTERM, so that run.completed can say which ended the run.
func signalContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sigs:
			cancel(fmt.Errorf("received %s", sigName(s)))
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(sigs); cancel(nil) }
}

// runOutput is what run and resume print around the engine's display.
type runOutput struct {
	json, quiet, noTranscript bool
	stepOutput                engine.StepOutput
	errw                      io.Writer
}

func (o *runOutput) setup(cmd *cobra.Command, e *engine.Engine) {
	o.errw = cmd.ErrOrStderr()
	e.StepOutput = o.stepOutput
	switch {
	case o.quiet:
	case o.json:
		e.Display = colorDisplay(cmd, cmd.ErrOrStderr())
	default:
		e.Display = colorDisplay(cmd, cmd.OutOrStdout())
	}
}

// started prints the run id and transcript path, once the run can no
// longer be refused.
func (o *runOutput) started(id, path string) {
	if o.quiet || o.json {
		return
	}
	fmt.Fprintf(o.errw, "run %s\n", id)
	if path != "" {
		fmt.Fprintf(o.errw, "transcript %s\n", path)
	}
}

// runJSON is the object run --json and resume --json print.
type runJSON struct {
	RunID        string           `json:"run_id"`
	Workflow     string           `json:"workflow"`
	Status       string           `json:"status"`
	ExitCode     int              `json:"exit_code"`
	Error        string           `json:"error,omitempty"`
	DurationMS   int64            `json:"duration_ms"`
	Attempt      int              `json:"attempt"`
	Usage        transcript.Usage `json:"usage"`
	CostUSD      *float64         `json:"cost_usd,omitempty"`
	Outputs      map[string]any   `json:"outputs,omitempty"`
	Transcript   string           `json:"transcript,omitempty"`
	ReplayedFrom string           `json:"replayed_from,omitempty"`
}

// finish turns the engine's answer into output and an exit status.
func (o *runOutput) finish(cmd *cobra.Command, e *engine.Engine, wf *workflow.Workflow, rep *engine.Report, err error) error {
	if err != nil {
		var ie *engine.InputError
		var re *engine.ResumeError
		var oe *engine.OptionError
		var ee *engine.EnvError
		if errors.As(err, &ie) || errors.As(err, &re) || errors.As(err, &oe) || errors.As(err, &ee) {
			return codedError(errcode.UserInputValidationFailed, e.Masker.MaskString(err.Error()), nil)
		}
		c := errcode.SystemIOWriteFailed
		if errors.Is(err, os.ErrPermission) {
			c = errcode.SystemIOPermissionDenied
		}
		return codedError(c, e.Masker.MaskString(err.Error()), nil)
	}
	if rep.TranscriptPath != "" {
		indexWritten(cmd, e.Storage, rep.TranscriptPath)
	}
	if rep.RecordError != nil {
		fmt.Fprintf(o.errw, "reel: the run was stopped: recording failed: %s\n", e.Masker.MaskString(rep.RecordError.Error()))
	}
	if o.json {
		s := runJSON{RunID: rep.RunID, Workflow: wf.Name, Status: rep.Status, ExitCode: rep.ExitCode, Error: rep.Error,
			DurationMS: rep.Duration.Milliseconds(), Attempt: rep.Attempt, Usage: rep.Usage, CostUSD: rep.CostUSD,
			Outputs: rep.Outputs, Transcript: rep.TranscriptPath, ReplayedFrom: rep.ReplayedFrom}
		if err := writeJSON(cmd.OutOrStdout(), s); err != nil {
			return &exitError{code: exitSystem, msg: err.Error()}
		}
	}
	if rep.ExitCode != 0 {
		return &exitError{code: rep.ExitCode}
	}
	return nil
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

// newEngine configures an engine for the project (its executable step
// types and AWF's plugins, whose output goes to pluginLog) and the storage
// flag. A caller that runs or validates closes e.PluginHost.
func newEngine(p *project.Project, storage string, pluginLog io.Writer) *engine.Engine {
	return &engine.Engine{Storage: p.Storage(storage), ProjectDir: p.Root, Plugins: p.Config.Plugins, NotifyBackend: p.Config.Notify.DefaultBackend,
		PluginHost: openPlugins(p, pluginLog)}
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

// loadWorkflow finds ref as reel run does (a path, PACK/WORKFLOW, or a
// name in the project's, the global and AWF_WORKFLOWS_PATH's workflows)
// and loads it, printing every problem of an invalid file.
func loadWorkflow(cmd *cobra.Command, e *engine.Engine, ref string) (*workflow.Workflow, error) {
	// Loading a file of many thousands of states takes a while and cannot
	// stop halfway: a signal returns at once (the process then exits).
	type loaded struct {
		wf  *workflow.Workflow
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		wf, err := e.LoadWorkflow(ref)
		done <- loaded{wf, err}
	}()
	select {
	case l := <-done:
		if l.err != nil {
			return nil, workflowError(cmd, e.Masker, ref, l.err)
		}
		return l.wf, nil
	case <-cmd.Context().Done():
		return nil, errInterrupted
	}
}

// workflowError is the error of a workflow that could not be loaded: a
// name that resolves to nothing (exit 1), an invalid file (exit 2, every
// problem printed first), or a file that cannot be read.
func workflowError(cmd *cobra.Command, m *secrets.Masker, ref string, err error) error {
	var probs workflow.Problems
	if errors.As(err, &probs) {
		hints := hintsOff(cmd)
		for _, p := range probs {
			fmt.Fprintln(cmd.ErrOrStderr(), m.MaskString(hints(p.String())))
		}
		file := ref
		if len(probs) > 0 && probs[0].File != "" {
			file = probs[0].File
		}
		return codedError(probs.Code(), m.MaskString(fmt.Sprintf("%s: %d problem(s)", file, probs.Errors())), map[string]any{"file": file},
			"reel validate "+ref+" lists the problems again")
	}
	if errors.Is(err, workflow.ErrNotFound) {
		return codedError(errcode.UserInputMissingFile, m.MaskString(err.Error()), map[string]any{"path": ref},
			"reel list shows the workflows reel can run here")
	}
	if errors.Is(err, os.ErrPermission) {
		return codedError(errcode.SystemIOPermissionDenied, m.MaskString(err.Error()), map[string]any{"path": ref})
	}
	return codedError(errcode.SystemIOReadFailed, m.MaskString(err.Error()), map[string]any{"path": ref})
}

func parseInputs(kvs []string) (map[string]string, error) {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--input %q: want key=value", kv)
		}
		// given twice, the last value wins, as in AWF
		m[k] = v
	}
	return m, nil
}

// dropUndeclared removes the --input values wf declares no input for, with
// a warning: AWF ignores them, so a command line written for it runs.
func dropUndeclared(cmd *cobra.Command, wf *workflow.Workflow, given map[string]string, quiet bool) {
	for _, k := range wf.Undeclared(given) {
		delete(given, k)
		if !quiet {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: --input %s: workflow %s declares no such input: ignored\n", k, wf.Name)
		}
	}
}

func parseMocks(kvs []string) (map[string]string, error) {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--mock %q: want states.STATE.FIELD=value", kv)
		}
		m[k] = v
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// configInputs fills the inputs the workflow declares and the command line
// left out from the project configuration's inputs (AWF's .awf/config.yaml
// inputs, and .reel/config.yaml's).
func configInputs(wf *workflow.Workflow, cfg *project.Config, given map[string]string) {
	if cfg == nil {
		return
	}
	for _, in := range wf.Inputs {
		if _, ok := given[in.Name]; ok {
			continue
		}
		v, ok := cfg.Inputs[in.Name]
		if !ok || v == nil {
			continue
		}
		switch x := v.(type) {
		case []any:
			// an array input reads JSON, which keeps commas and objects
			b, err := json.Marshal(x)
			if err != nil {
				continue
			}
			given[in.Name] = string(b)
		default:
			given[in.Name] = fmt.Sprint(x)
		}
	}
}

// missingInputs lists the required inputs without a value or a default.
func missingInputs(wf *workflow.Workflow, given map[string]string) []workflow.Input {
	var out []workflow.Input
	for _, in := range wf.Inputs {
		if _, ok := given[in.Name]; !ok && in.Required && in.Default == nil {
			out = append(out, in)
		}
	}
	return out
}

// askInputs asks for the missing required inputs on a terminal, or says
// which are missing and how to give them.
func askInputs(cmd *cobra.Command, wf *workflow.Workflow, given map[string]string) error {
	missing := missingInputs(wf, given)
	if len(missing) == 0 {
		return nil
	}
	if !isTerminal(cmd.InOrStdin()) {
		var parts []string
		for _, in := range missing {
			parts = append(parts, describeInput(in))
		}
		names := make([]string, len(missing))
		for i, in := range missing {
			names[i] = in.Name
		}
		return codedError(errcode.UserInputValidationFailed,
			fmt.Sprintf("missing required input(s): %s; give each with --input NAME=VALUE (or run on a terminal to be asked)", strings.Join(parts, "; ")),
			map[string]any{"missing_inputs": names}, "reel run "+wf.Name+" --help lists the inputs")
	}
	if err := promptInputs(cmd.InOrStdin(), cmd.ErrOrStderr(), missing, given, palette{on: useColor(cmd, cmd.ErrOrStderr())}); err != nil {
		return &exitError{code: exitUser, msg: err.Error()}
	}
	return nil
}

// describeInput is "name (type): description, one of a, b".
func describeInput(in workflow.Input) string {
	s := fmt.Sprintf("%s (%s)", in.Name, in.Type)
	var notes []string
	if in.Description != "" {
		notes = append(notes, in.Description)
	}
	if v := in.Validation; v != nil && len(v.Enum) > 0 {
		notes = append(notes, "one of "+strings.Join(v.Enum, ", "))
	}
	if len(notes) > 0 {
		s += ": " + strings.Join(notes, ", ")
	}
	return s
}

// loadRun finds a recorded run in the storage and reads it.
func loadRun(storage, ref string, opts rerun.Options) (*rerun.Run, error) {
	refs := runRefFlags{storage: storage}
	list, err := refs.resolve([]string{ref}, 1)
	if err != nil {
		return nil, err
	}
	return rerun.Load(list[0].Path, opts)
}

// sortedKeys is the keys of m in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
