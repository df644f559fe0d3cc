package awfapi

import (
	"math"
	"path/filepath"
	"strconv"

	"github.com/reelhq/reel/internal/workflow"
)

// The types below are AWF's workflow as `GET /api/workflows/{scope}/{name}`
// serializes it: AWF's domain structs through encoding/json, so the keys are
// Go field names. They exist for that one response; reel's own
// /api/runs never uses them.

// Workflow is AWF's workflow definition.
type Workflow struct {
	Name        string
	Description string
	Version     string
	Author      string
	Tags        []string
	Inputs      []Input
	Env         []string
	Initial     string
	Steps       map[string]*Step
	Hooks       WorkflowHooks
	Plugins     map[string]string
	SourceDir   string
}

// Input is one declared input.
type Input struct {
	Name        string
	Type        string
	Description string
	Required    bool
	Default     any
	Validation  *InputValidation
}

// InputValidation constrains an input.
type InputValidation struct {
	Pattern       string
	Enum          []string
	Min           *int
	Max           *int
	FileExists    bool
	FileExtension []string
}

// HookAction is one hook entry.
type HookAction struct {
	Log     string
	Command string
}

// WorkflowHooks are the workflow's hooks.
type WorkflowHooks struct {
	WorkflowStart  []HookAction
	WorkflowEnd    []HookAction
	WorkflowError  []HookAction
	WorkflowCancel []HookAction
}

// StepHooks are a step's hooks.
type StepHooks struct {
	Pre  []HookAction
	Post []HookAction
}

// Transition is one conditional transition.
type Transition struct {
	When string
	Goto string
}

// Retry is a step's retry policy.
type Retry struct {
	MaxAttempts        int
	InitialDelayMs     int
	MaxDelayMs         int
	Backoff            string
	Multiplier         float64
	Jitter             float64
	RetryableExitCodes []int
}

// Capture names the variables a step's output is captured into.
type Capture struct {
	Stdout   string
	Stderr   string
	MaxSize  string
	Encoding string
}

// Loop is a for_each or while loop.
type Loop struct {
	Type                       string
	Items                      string
	Condition                  string
	Body                       []string
	MaxIterations              int
	MaxIterationsExpr          string
	MaxIterationsExplicitlySet bool
	BreakCondition             string
	OnComplete                 string
	MemoryConfig               map[string]any
}

// CallWorkflow is a sub-workflow call.
type CallWorkflow struct {
	Workflow string
	Inputs   map[string]string
	Outputs  map[string]string
	Timeout  int
}

// Conversation is an agent step's conversation mapping.
type Conversation struct {
	ContinueFrom string
}

// Agent is an agent step's configuration.
type Agent struct {
	Provider     string
	Prompt       string
	PromptFile   string
	Options      map[string]any
	Timeout      int
	Mode         string
	SystemPrompt string
	Role         string
	Conversation *Conversation
	OutputFormat string
}

// Skill is one skill an agent step loads.
type Skill struct {
	Name string
	Path string
}

// Step is one state.
type Step struct {
	Name            string
	Type            string
	Description     string
	Command         string
	ScriptFile      string
	Dir             string
	Operation       string
	OperationInputs map[string]any
	Branches        []string
	Strategy        string
	MaxConcurrent   int
	Timeout         int
	OnSuccess       string
	OnFailure       string
	Transitions     []Transition
	DependsOn       []string
	Retry           *Retry
	Capture         *Capture
	Hooks           StepHooks
	ContinueOnError bool
	Status          string
	Message         string
	ExitCode        int
	Loop            *Loop
	TemplateRef     map[string]any
	CallWorkflow    *CallWorkflow
	Agent           *Agent
	Skills          []Skill
	Config          map[string]any
	MCPProxy        map[string]any
}

func src(t *workflow.Template) string {
	if t == nil {
		return ""
	}
	return t.Source
}

func exprSrc(e *workflow.Expr) string {
	if e == nil {
		return ""
	}
	return e.Source
}

func hooks(hs []workflow.HookAction) []HookAction {
	if len(hs) == 0 {
		return nil
	}
	out := make([]HookAction, len(hs))
	for i, h := range hs {
		out[i] = HookAction{Log: src(h.Log), Command: src(h.Command)}
	}
	return out
}

func intPtr(f *float64) *int {
	if f == nil || math.IsNaN(*f) || *f > math.MaxInt32 || *f < math.MinInt32 {
		return nil
	}
	n := int(*f)
	return &n
}

// awfWorkflow is wf as AWF shows it.
func awfWorkflow(wf *workflow.Workflow) *Workflow {
	out := &Workflow{Name: wf.Name, Description: wf.Description, Version: wf.Version, Author: wf.Author, Tags: wf.Tags,
		Env: wf.Env, Initial: wf.Initial, Steps: make(map[string]*Step, len(wf.States)), SourceDir: filepath.Dir(wf.File)}
	for _, in := range wf.Inputs {
		ai := Input{Name: in.Name, Type: in.Type, Description: in.Description, Required: in.Required}
		if in.Default != nil {
			if v, err := workflow.ParseInput(in, *in.Default); err == nil {
				ai.Default = v
			} else {
				ai.Default = *in.Default
			}
		}
		if v := in.Validation; v != nil {
			ai.Validation = &InputValidation{Pattern: v.Pattern, Enum: v.Enum, Min: intPtr(v.Min), Max: intPtr(v.Max), FileExists: v.FileExists, FileExtension: v.FileExtension}
		}
		out.Inputs = append(out.Inputs, ai)
	}
	if h := wf.Hooks; h != nil {
		out.Hooks = WorkflowHooks{WorkflowStart: hooks(h.Start), WorkflowEnd: hooks(h.End), WorkflowError: hooks(h.Error), WorkflowCancel: hooks(h.Cancel)}
	}
	for name, st := range wf.States {
		out.Steps[name] = awfStep(st)
	}
	return out
}

func awfStep(st *workflow.State) *Step {
	s := &Step{Name: st.Name, Type: st.Type, Command: src(st.Command), ScriptFile: st.ScriptFile, Dir: src(st.Dir),
		Operation: st.Operation, OperationInputs: st.Inputs, Branches: st.Parallel, MaxConcurrent: st.MaxConcurrent,
		Timeout: int(st.Timeout.Seconds()), OnSuccess: st.OnSuccess, DependsOn: st.DependsOn, ContinueOnError: st.ContinueOnError,
		Status: st.Status, Message: src(st.Message), Config: st.Config}
	if st.Type == workflow.TypeParallel {
		s.Strategy = st.Strategy
	}
	if s.Type == workflow.TypeStep {
		s.Type = "command" // AWF's name for a command step
	}
	if f := st.OnFailure; f != nil {
		s.OnFailure = f.State
		if f.Inline {
			s.Message, s.ExitCode = src(f.Message), f.Status
		}
	}
	for _, t := range st.Transitions {
		s.Transitions = append(s.Transitions, Transition{When: exprSrc(t.When), Goto: t.Goto})
	}
	if r := st.Retry; r != nil {
		s.Retry = &Retry{MaxAttempts: r.MaxAttempts, InitialDelayMs: int(r.InitialDelay.Milliseconds()), MaxDelayMs: int(r.MaxDelay.Milliseconds()),
			Backoff: r.Backoff, Multiplier: r.Multiplier, Jitter: r.Jitter, RetryableExitCodes: r.RetryableExitCodes}
	}
	if c := st.Capture; c != nil {
		s.Capture = &Capture{Stdout: c.Stdout, Stderr: c.Stderr}
		if c.MaxSize > 0 {
			s.Capture.MaxSize = strconv.FormatInt(c.MaxSize, 10)
		}
	}
	if h := st.Hooks; h != nil {
		s.Hooks = StepHooks{Pre: hooks(h.Pre), Post: hooks(h.Post)}
	}
	switch st.Type {
	case workflow.TypeForEach, workflow.TypeWhile:
		l := &Loop{Type: st.Type, Items: src(st.Items), Condition: exprSrc(st.While), Body: st.Body, MaxIterations: st.MaxIterations,
			MaxIterationsExpr: src(st.MaxIterationsExpr), MaxIterationsExplicitlySet: st.MaxIterations > 0 || st.MaxIterationsExpr != nil,
			BreakCondition: exprSrc(st.BreakWhen), OnComplete: st.OnComplete}
		s.Loop = l
	case workflow.TypeCallWorkflow:
		if c := st.Call; c != nil {
			cw := &CallWorkflow{Workflow: c.Workflow, Outputs: c.Outputs, Timeout: int(c.Timeout.Seconds())}
			if len(c.Inputs) > 0 {
				cw.Inputs = make(map[string]string, len(c.Inputs))
				for k, v := range c.Inputs {
					cw.Inputs[k] = src(v)
				}
			}
			s.CallWorkflow = cw
		}
	case workflow.TypeAgent:
		a := &Agent{Provider: st.Provider, Prompt: src(st.Prompt), PromptFile: st.PromptFile, Options: st.Options,
			Timeout: int(st.Timeout.Seconds()), SystemPrompt: src(st.SystemPrompt), OutputFormat: st.OutputFormat}
		if sp := st.Agent; sp != nil {
			a.Mode, a.Role = sp.Mode, src(sp.Role)
			if sp.Session != nil && sp.Session.ContinueFrom != "" {
				a.Conversation = &Conversation{ContinueFrom: sp.Session.ContinueFrom}
			}
			for _, sk := range sp.Skills {
				s.Skills = append(s.Skills, Skill{Name: sk.Name, Path: sk.Path})
			}
		}
		s.Agent = a
	}
	return s
}
