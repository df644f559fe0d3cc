// Package workflow loads and validates reel workflow files: the YAML
// state-machine syntax AWF defined, which reel runs. docs/workflow-syntax.md
// in the repository is the reference for every field, state type,
// template namespace, function and expression; docs/awf-compat.md says
// where reel and AWF differ and why.
//
// The package decides what a workflow may say. Every problem it reports
// carries the file, line and column of the offending node, and it reports
// all of them at once. A reference that cannot resolve (an undefined
// input, an unknown or later state, a property in the wrong case, .loop
// outside a loop, .error outside an error hook) is a problem, not an empty
// string at run time. Fields AWF accepts but gives no meaning to (a step's
// when or loop, depends_on) load, with a warning where they do nothing.
package workflow

import (
	"time"
)

// Pos is a 1-based line and column in a workflow file.
type Pos struct {
	Line int
	Col  int
}

// Workflow is a loaded, validated workflow file.
type Workflow struct {
	// File is the path the workflow was read from ("" when parsed from bytes).
	File        string
	Name        string
	Version     string
	Description string
	// Author and Tags describe the workflow; they change nothing in a run.
	Author string
	Tags   []string
	// Env lists the environment variables the workflow needs: a run
	// refuses to start while one is unset.
	Env     []string
	Inputs  []Input
	Outputs []Output
	// Initial names the first state.
	Initial string
	// States holds every state by name; Order lists their names in file order.
	States map[string]*State
	Order  []string
	// Hooks are the workflow's hooks (nil when it has none).
	Hooks *WorkflowHooks
	// Warnings are problems that do not make the file invalid.
	Warnings Problems
	// Pack is the installed workflow pack the file belongs to (nil for
	// a project's or a global workflow).
	Pack *Pack

	// SHA256 is the hex SHA-256 of the file's bytes; StateDigests holds a
	// short digest of each state's definition without its flow fields
	// (on_success, on_failure, transitions, on_complete, description).
	SHA256       string
	StateDigests map[string]string
}

// Pack is an installed workflow pack, as a workflow of it sees it: its
// name (the namespace of its workflows, NAME/workflow, and the value of
// .awf.pack_name) and its root directory, where its prompts/, scripts/
// and templates/ are.
type Pack struct {
	Name string
	Dir  string
}

// Input declares one workflow input.
type Input struct {
	Name     string
	Type     string // string | integer | number | boolean | array
	Required bool
	// Default is the default's text; an array default is its JSON.
	Default    *string
	Validation *InputValidation
	Pos        Pos

	// Description says what the input is for (shown by run --help and list).
	Description string
}

// Input types.
const (
	InputString  = "string"
	InputInteger = "integer"
	InputNumber  = "number"
	InputBoolean = "boolean"
	InputArray   = "array"
)

// InputTypes lists the input types.
var InputTypes = []string{InputString, InputInteger, InputNumber, InputBoolean, InputArray}

// InputValidation constrains an input's value.
type InputValidation struct {
	Pattern    string
	Enum       []string
	Min, Max   *float64
	FileExists bool
	// FileExtension lists the allowed extensions (".go"), compared
	// without regard to case.
	FileExtension []string
}

// Output declares a value a caller of this workflow receives; From is an
// expression evaluated against the finished run (e.g. states.analyze.Output).
type Output struct {
	Name string
	From *Expr
	Pos  Pos
}

// State types with built-in meaning. Any other type is a custom step type.
// AWF's "command" loads as TypeStep.
const (
	TypeStep         = "step"
	TypeAgent        = "agent"
	TypeTerminal     = "terminal"
	TypeParallel     = "parallel"
	TypeForEach      = "for_each"
	TypeWhile        = "while"
	TypeOperation    = "operation"
	TypeCallWorkflow = "call_workflow"
)

// Parallel strategies.
const (
	StrategyAllSucceed = "all_succeed"
	StrategyAnySucceed = "any_succeed"
	StrategyBestEffort = "best_effort"
)

// Loop limits.
const (
	DefaultMaxIterations = 100
	MaxMaxIterations     = 10000
)

// State is one state of the machine. Which fields are set depends on Type.
type State struct {
	Name string
	Type string
	Pos  Pos
	// Description says what the state is for; it changes nothing in a run.
	Description string

	// step
	Command         *Template
	ScriptFile      string
	Dir             *Template
	Timeout         time.Duration
	Retry           *Retry
	ContinueOnError bool

	// agent
	Provider     string
	Prompt       *Template
	PromptFile   string
	SystemPrompt *Template
	Options      map[string]any
	OutputFormat string
	// Conversation holds the follow-up prompts of a multi-turn agent step,
	// sent in order in the same provider session after the first prompt.
	// Besides the usual data, each sees the previous turn's reply as
	// .turn.Output (and .turn.JSON when it parses as JSON) and its own
	// turn number as .turn.Number (2 for the first follow-up).
	Conversation []*Template
	// Agent holds the agent fields of AWF's syntax (mode, the
	// conversation mapping, skills, role, a templated provider); nil when
	// the state sets none.
	Agent *AgentSpec
	// shorthands are step-level model/max_tokens until they join Options.
	shorthands map[string]shorthandValue

	// terminal
	Status  string
	Message *Template

	// parallel
	Parallel      []string
	Strategy      string
	MaxConcurrent int

	// for_each / while
	Items         *Template // template form
	ItemsLiteral  []any     // YAML sequence form
	Body          []string
	MaxIterations int
	// MaxIterationsExpr is a templated max_iterations, resolved when the
	// loop starts; its text may be arithmetic ("{{.inputs.a}} * 2").
	MaxIterationsExpr *Template
	BreakWhen         *Expr
	OnComplete        string
	While             *Expr

	// operation
	Operation string
	// Inputs holds operation inputs; string leaves are templates.
	Inputs map[string]any

	// call_workflow
	Call *CallWorkflow

	// custom step type (reel's executable plugins, AWF's plugin step
	// types): its config, passed to the step type as written
	Config map[string]any

	// flow
	OnSuccess   string
	OnFailure   *FailureTarget
	Transitions []Transition

	// AWF's hooks and capture (nil when the state has none)
	Hooks   *StepHooks
	Capture *Capture
	// MCPProxy is the state's mcp_proxy block (nil when it has none).
	MCPProxy *MCPProxy
	// DependsOn names states this one is said to follow. As in AWF it
	// orders nothing: a parallel block starts its branches together.
	DependsOn []string
}

// Retry configures repeated attempts of a step.
type Retry struct {
	MaxAttempts        int
	InitialDelay       time.Duration
	MaxDelay           time.Duration
	Backoff            string // constant | linear | exponential
	Multiplier         float64
	Jitter             float64
	RetryableExitCodes []int
}

// FailureTarget is on_failure: either a state name or an inline end of the
// run with a message and exit status.
type FailureTarget struct {
	State   string
	Message *Template
	// Status is the exit status the inline form gives the run; 0 when it
	// names none (the run then exits 3, AWF's execution error).
	Status int
	Inline bool
}

// Transition is one entry of transitions; a nil When always matches.
type Transition struct {
	When *Expr
	Goto string
	Pos  Pos
}

// CallWorkflow describes a sub-workflow call. Outputs maps a name visible in
// the caller to an output name of the child.
type CallWorkflow struct {
	Workflow string
	Inputs   map[string]*Template
	Outputs  map[string]string
	Timeout  time.Duration
}
