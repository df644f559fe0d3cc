// Package workflow loads and validates reel workflow files: the YAML
// state-machine syntax described in workflow-syntax.md (compatible with AWF's
// core syntax). Every problem it reports carries the file, line and column of
// the offending node.
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
	Inputs      []Input
	Outputs     []Output
	// Initial names the first state.
	Initial string
	// States holds every state by name; Order lists their names in file order.
	States map[string]*State
	Order  []string
	// Hooks are the workflow's hooks (nil when it has none).
	Hooks *WorkflowHooks
	// Warnings are problems that do not make the file invalid.
	Warnings Problems

	// SHA256 is the hex SHA-256 of the file's bytes; StateDigests holds a
	// short digest of each state's definition without its flow fields
	// (on_success, on_failure, transitions, on_complete, description).
	SHA256       string
	StateDigests map[string]string
}

// Input declares one workflow input.
type Input struct {
	Name       string
	Type       string // string | integer | boolean
	Required   bool
	Default    *string
	Validation *InputValidation
	Pos        Pos

	// Description says what the input is for (shown by run --help and list).
	Description string
}

// InputValidation constrains an input's value.
type InputValidation struct {
	Pattern    string
	Enum       []string
	Min, Max   *float64
	FileExists bool
}

// Output declares a value a caller of this workflow receives; From is an
// expression evaluated against the finished run (e.g. states.analyze.Output).
type Output struct {
	Name string
	From *Expr
	Pos  Pos
}

// State types with built-in meaning. Any other type is a custom step type.
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
	BreakWhen     *Expr
	OnComplete    string
	While         *Expr

	// operation
	Operation string
	// Inputs holds operation inputs; string leaves are templates.
	Inputs map[string]any

	// call_workflow
	Call *CallWorkflow

	// custom step type
	Config map[string]any

	// flow
	OnSuccess   string
	OnFailure   *FailureTarget
	Transitions []Transition

	// AWF's hooks and capture (nil when the state has none)
	Hooks   *StepHooks
	Capture *Capture
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
	Status  int
	Inline  bool
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
