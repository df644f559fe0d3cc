// Package engine runs workflows loaded by package workflow and records every
// run as a transcript (one file per run, children in their own files), an
// audit trail (<storage>/audit.jsonl) and a human-readable display.
//
// The flow follows AWF's behaviour (docs/awf-compat.md lists where and why
// reel departs from it). Choices the specs leave open:
//
//   - Flow. After a state, its transitions are tried in order (success and
//     failure alike), then on_success (on_complete for loops) or
//     on_failure. A state without a next state ends the run: success when
//     it succeeded, else failure. Branches of a parallel block run as
//     children: their own on_success/on_failure/transitions are not
//     followed. A terminal state reached inside a branch or a body ends
//     the whole run.
//   - Exit codes are AWF's (package exitcode): a failed run exits 3 (an
//     inline on_failure with a status exits with that status), bad inputs
//     or an unset variable of the workflow's env stop the run before it
//     starts (the CLI exits 1), a cancelled run exits 130.
//   - Loop bodies. After each body state its next state decides: a body
//     state is jumped to, the loop itself (or nothing) goes on in order, a
//     state outside ends the loop and the run goes there. A failing body
//     state fails the loop unless it continues on error or its failure
//     leads back to the loop. break_when is evaluated after every
//     iteration (one that cannot be evaluated is reported and ignored).
//     for_each runs at most max_iterations items (the rest are skipped and
//     counted in its result); while stops at max_iterations and says so.
//     max_iterations may be a template, arithmetic included, resolved when
//     the loop starts. A template items value is read as a JSON array, or
//     else as comma-separated values. A loop's .Output is "completed N
//     iterations".
//   - Data. Templates and expressions read the namespaces of package
//     workflow (namespace.go here builds them, in one place). Only states
//     that ran are under states: a template reading another fails its
//     step, a condition reading one is false. .states.X.Output is the
//     output as it came (a command's trailing newline included, as in
//     AWF), whole up to StepOutputMax (64 MiB: a step printing more is
//     stopped and fails); the transcript's CommandResult keeps stdout and
//     stderr cut at OutputLimit (64 KiB) and says when it cut. JSON output
//     is parsed into .JSON. A timeout gives exit status 124, a cancel
//     130, a signal 128+n.
//   - Retry attempts are numbered (payload attempt 1..n) only for states
//     with retry.max_attempts > 1; otherwise attempt is omitted.
//   - Processes. Every command runs with $SHELL -c (else /bin/sh), as AWF
//     does, in its own process group; a timeout or cancel sends SIGTERM to
//     the group, then SIGKILL after KillGrace.
//   - call_workflow. The child is found beside the calling file (NAME,
//     NAME.yaml, NAME.yml) or in <project>/.reel/workflows and
//     .awf/workflows. Its declared outputs are mapped through the call's
//     outputs into .states.CALL.Data; the parent's run totals include the
//     child's tokens. A cycle (a file already on the call stack) or
//     nesting deeper than MaxDepth ends the run at the call, past its
//     on_failure, as AWF ends it.
//   - Hooks (AWF's). Each hook list runs as one command step nested under
//     what it hooks (docs/decisions.md §11); a failing workflow_start command ends
//     the run with exit status 3, every other hook failure is recorded and
//     changes nothing. See hooks.go.
//   - Operations. http.request, github.* (package github) and notify.send
//     (package notify) are built in; PLUGIN.OP goes to an installed AWF
//     plugin (plugin.go); any other name ends the run when its state runs
//     (on_failure is not followed), as in AWF.
//   - Agent conversations. A multi-turn agent step gets its user messages
//     from its conversation list, from Engine.Stdin (mode: conversation,
//     one line each, read by one goroutine for the whole engine), or by
//     repeating its prompt (conversation.max_turns / stop_condition); see
//     conversation.go. conversation.continue_from resumes the session the
//     latest execution of the named step left in this run; sessions do not
//     cross into sub-workflows.
//   - Coexistence. A run's and a step's start and end go through one emit
//     path (record.go): the event is masked once, written to the
//     transcript when it is on, and the audit trail and the display take
//     their fields from the masked event, the same bytes with the
//     transcript on or off (docs/decisions.md §10). The run id and the
//     transcript path are the CLI's to print (on stderr), not the
//     display's.
//
// Where things are. engine.go: Engine, its options and Run. run.go: the
// run type, its constructor and its lifecycle (execute). exec.go: the
// state machine and the dispatch of a state to its kind; flow.go loops and
// parallel blocks, command.go and script.go commands, agent.go and
// conversation.go agents, call.go call_workflow, operation.go,
// builtin_ops.go and plugin.go operations and AWF plugins, custom.go
// registered step types, hooks.go hooks and captures. namespace.go: what
// templates and expressions read. Recording: record.go (the emit path),
// span.go (a step's start and end), mask.go, audit.go, display.go (the
// terminal and the steps' output), failure.go (a write error stops the
// run). Ways of running: lifecycle.go, resume.go, replayfrom.go,
// interactive.go, single.go, plan.go (dry run).
package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/reelhq/reel/internal/agent"
	"github.com/reelhq/reel/internal/catalog"
	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// Defaults.
const (
	DefaultOutputLimit   = 64 << 10
	DefaultStepOutputMax = 64 << 20
	DefaultMaxDepth      = 8
	// maxStateVisits bounds how many states one run may execute through
	// its transitions, so a cycle without an exit ends with a clear error.
	maxStateVisits = 100000
)

// Engine runs workflows. Configure its fields, Register custom step types,
// then call Run; Run may be called concurrently once configured.
type Engine struct {
	// Storage is the storage directory (transcripts/ and audit.jsonl).
	Storage string
	// NoTranscript turns the transcript off; the audit trail and the
	// display are unchanged.
	NoTranscript bool
	// Masker, when set, masks secrets in every transcript event, every
	// display line and every audit entry, with or without the transcript.
	Masker *secrets.Masker
	// Fsync is the transcript fsync policy.
	Fsync transcript.FsyncPolicy
	// Limits bound each transcript's lines and size (the transcript
	// package's defaults when zero). Reaching one stops the run.
	Limits transcript.Limits
	// Display receives the human-readable progress; nil discards it.
	Display io.Writer
	// StepOutput says how the display shows what steps print (their
	// commands, agents' replies, hooks); the transcript keeps all of it
	// whatever the choice.
	StepOutput StepOutput
	// OutputLimit caps the stdout and stderr a command step's transcript
	// result keeps (DefaultOutputLimit when 0); the result says when it
	// cut (truncated). Templates and expressions read the whole output.
	OutputLimit int
	// StepOutputMax bounds what a step's stdout or stderr may hold for
	// templates and expressions (DefaultStepOutputMax when 0): a command
	// printing more is stopped and its state fails, saying so.
	StepOutputMax int
	// MaxDepth bounds call_workflow nesting (DefaultMaxDepth when 0).
	MaxDepth int
	// ProjectDir is the project root: where workflows, packs, templates,
	// prompts and scripts are looked up (package catalog); "" outside a
	// project.
	ProjectDir string
	// Dir is the working directory of steps without their own dir and of
	// agents (whose builtin tools are confined to it); "" means the
	// process's working directory.
	Dir string
	// Environ is the environment of steps; nil means os.Environ().
	Environ []string
	// Plugins are executable step types (usually from .reel/config.yaml).
	Plugins map[string]Plugin
	// PluginHost, when set, runs AWF's external plugins: their operations
	// (operation: PLUGIN.OP), their step types (type: PLUGIN.TYPE) and
	// the lifecycle events they subscribe to (see plugin.go). The caller
	// opens and closes it.
	PluginHost *plugin.Host
	// KillGrace is how long a cancelled or timed-out process group has
	// between SIGTERM and SIGKILL (2s when 0).
	KillGrace time.Duration
	// NotifyBackend is the notify.send backend of steps that name none
	// (the project config's notify.default_backend).
	NotifyBackend string
	// Stdin is where mode: conversation agent steps read the user's
	// messages, a line each; nil means there is no input, so such a step
	// ends after its first reply.
	Stdin io.Reader

	stdinOnce  sync.Once
	stdinLines chan inputLine
	// OnRecorder, when set, is called with the recorder of every run (the
	// top-level run's, parentRunID "", and each child run's, with the id
	// of the run that called it) once its transcript is open and before
	// its first event, so that a live consumer (the OpenTelemetry export)
	// can subscribe.
	OnRecorder func(rec *transcript.Recorder, parentRunID string)

	custom    map[string]StepFunc
	displayMu sync.Mutex
	masksOnce sync.Once
	masksBy   masker // see masks
}

// RunOptions parameterize one run.
type RunOptions struct {
	// Inputs are the workflow inputs as text, checked against the
	// workflow's declarations.
	Inputs map[string]string
	// RunID fixes the run id (a UUID v4); empty means a new one.
	RunID string
	// OnStart, when set, is called once the run has its transcript and
	// its audit trail and run.started is recorded: from then on the run
	// cannot be refused and always ends with run.completed.
	OnStart func(runID, transcriptPath string)
	// ReplayFrom, when set, makes agent steps take their replies, tool
	// calls and usage from this recorded run instead of calling their
	// provider (see replay.go); AllowPromptDrift lets a step whose prompt
	// differs from the recording replay anyway.
	ReplayFrom       *rerun.Run
	AllowPromptDrift bool
	// Pause, when set, is asked before every step (interactive mode).
	Pause PauseFunc
	// Turns, when set, gives the user's messages of mode: conversation
	// agent steps instead of Engine.Stdin (an editor's next prompt).
	Turns TurnFunc
	// Step, when set, runs this one state alone (with its children) instead
	// of the state machine; Mocks preset results of other states and loop
	// variables it reads ("states.build.Output" → value, "loop.Item" → value).
	Step  string
	Mocks map[string]string
	// Defaults are input values from the project configuration
	// (.awf/config.yaml, .reel/config.yaml); Inputs override them, and
	// values for inputs the workflow does not declare are ignored.
	Defaults map[string]any
}

// Report describes a finished run.
type Report struct {
	RunID string
	// TranscriptPath is empty when the transcript is off.
	TranscriptPath string
	// Status is success, failure or cancelled.
	Status   string
	ExitCode int
	// Error says why a run did not succeed.
	Error    string
	Duration time.Duration
	Usage    transcript.Usage
	CostUSD  *float64
	Outputs  map[string]any
	// Attempt counts the runs of the transcript: 1, or 2 and more for a
	// resumed run.
	Attempt int
	// ReplayedFrom is the recorded run a --replay-from run took its agent
	// replies from.
	ReplayedFrom string
	// RecordError is the first storage write error (transcript or audit
	// trail), if any; it stopped the run, whose Status is then failure and
	// ExitCode 4.
	RecordError error

	fatal bool // see ending.fatal
}

// InputError reports workflow inputs that do not fit their declarations.
type InputError struct{ Problems []string }

func (e *InputError) Error() string { return "invalid inputs: " + strings.Join(e.Problems, "; ") }

// EnvError reports environment variables a workflow's env lists that are
// not set.
type EnvError struct {
	Workflow string
	Missing  []string
}

func (e *EnvError) Error() string {
	return fmt.Sprintf("workflow %s needs the environment variable(s) %s, which are not set", e.Workflow, strings.Join(e.Missing, ", "))
}

// Check reports what would stop a run of wf with opts from starting: an
// *EnvError for an unset environment variable the workflow's env lists,
// an *InputError for inputs that do not fit the declarations. Run checks
// the same; Check lets a caller refuse before it announces the run.
func (e *Engine) Check(wf *workflow.Workflow, opts RunOptions) error {
	_, err := e.checkStart(wf, opts)
	return err
}

func (e *Engine) checkStart(wf *workflow.Workflow, opts RunOptions) (map[string]any, error) {
	if err := e.checkEnv(wf); err != nil {
		return nil, err
	}
	return resolveInputs(wf, opts.Inputs, opts.Defaults)
}

// checkEnv refuses a run whose workflow lists an environment variable the
// steps' environment lacks (an empty value counts as set).
func (e *Engine) checkEnv(wf *workflow.Workflow) error {
	if len(wf.Env) == 0 {
		return nil
	}
	env := envMap(e.environ())
	var missing []string
	for _, name := range wf.Env {
		if _, ok := env[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return &EnvError{Workflow: wf.Name, Missing: missing}
	}
	return nil
}

// CustomTypes lists the registered and plugin step types, sorted.
func (e *Engine) CustomTypes() []string {
	var out []string
	for k := range e.custom {
		out = append(out, k)
	}
	for k := range e.Plugins {
		if _, dup := e.custom[k]; !dup {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Catalog is where the engine finds workflows by name: the project's, the
// global ones and the installed packs' (package catalog), in the steps'
// environment.
func (e *Engine) Catalog() *catalog.Catalog {
	env := envMap(e.environ())
	return &catalog.Catalog{ProjectDir: e.ProjectDir, Getenv: func(k string) string { s, _ := env[k].(string); return s }}
}

// Workflows lists every workflow the engine can run by name here, each
// with its scope (env, local, global or pack) and file, in lookup order;
// a name an earlier place shadows is listed with ShadowedBy set. The
// packs that could not be read come second; a workflows directory that
// cannot be read is an error.
func (e *Engine) Workflows() ([]catalog.Entry, []catalog.Problem, error) {
	return e.Catalog().List()
}

// LoadWorkflow finds the workflow ref names, as `reel run REF` does (a
// path, PACK/WORKFLOW, or a name looked up in catalog order), and loads
// it with the engine's options: a workflow.ErrNotFound for a name that
// resolves to nothing, workflow.Problems for an invalid file.
func (e *Engine) LoadWorkflow(ref string) (*workflow.Workflow, error) {
	c := e.Catalog()
	r, err := c.Find(ref)
	if err != nil {
		return nil, err
	}
	return c.Load(r, e.LoadOptions())
}

// LoadOptions returns the workflow loading options matching the engine's
// custom step types, with call_workflow targets checked as the engine
// will find them.
func (e *Engine) LoadOptions() workflow.Options {
	types := e.CustomTypes()
	return e.Catalog().Options(workflow.Options{
		CustomType: func(t string) bool {
			for _, x := range types {
				if x == t {
					return true
				}
			}
			// whether the plugin has this type is checked before the
			// run, when the plugin can be asked
			return e.PluginHost.ProvidesStepType(t)
		},
		CustomTypes:  types,
		ProjectDir:   e.ProjectDir,
		AgentFiles:   e.agentFiles(),
		AgentOptions: agent.CheckOptions,
	})
}

func (e *Engine) outputLimit() int {
	if e.OutputLimit > 0 {
		return e.OutputLimit
	}
	return DefaultOutputLimit
}

func (e *Engine) stepOutputMax() int {
	if e.StepOutputMax > 0 {
		return e.StepOutputMax
	}
	return DefaultStepOutputMax
}

func (e *Engine) maxDepth() int {
	if e.MaxDepth > 0 {
		return e.MaxDepth
	}
	return DefaultMaxDepth
}

// environ is the steps' environment. Its capacity is clipped: runs of one
// engine append to it concurrently, and an append into the spare capacity
// of a shared Environ would hand one run's REEL_RUN_ID to another.
func (e *Engine) environ() []string {
	if e.Environ != nil {
		return slices.Clip(e.Environ)
	}
	return os.Environ()
}

func (e *Engine) workDir() string {
	if e.Dir != "" {
		return e.Dir
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "."
}

func (e *Engine) killGrace() time.Duration {
	if e.KillGrace > 0 {
		return e.KillGrace
	}
	return 2 * time.Second
}

// Run executes wf to the end and returns its report. The error is set only
// when the run could not start (bad inputs, unwritable storage); a run that
// starts always ends with a report, also on failure and cancellation.
func (e *Engine) Run(ctx context.Context, wf *workflow.Workflow, opts RunOptions) (*Report, error) {
	inputs, err := e.checkStart(wf, opts)
	if err != nil {
		return nil, err
	}
	lc, err := e.lifecycleFor(wf, opts)
	if err != nil {
		return nil, err
	}
	id := opts.RunID
	if id == "" {
		id = transcript.NewRunID()
	}
	audit, err := openAudit(e.Storage)
	if err != nil {
		return nil, err
	}
	defer audit.close()
	file, _ := filepath.Abs(wf.File)
	r, err := e.newRun(wf, id, "", inputs, 0, []string{file}, audit)
	if err != nil {
		return nil, err
	}
	r.lifecycle = lc
	audit.onFail = r.recordFailed
	return r.execute(ctx), nil
}

func envMap(environ []string) map[string]any {
	m := make(map[string]any, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
