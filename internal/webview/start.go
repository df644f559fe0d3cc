package webview

import (
	"github.com/reelhq/reel/internal/workflow"
)

// Workflows is the start page: every workflow reel can run here, each with
// a form for its inputs.
type Workflows struct {
	// RunsOff, when set, says why the page cannot start runs (the forms
	// are shown without their buttons).
	RunsOff string
	Forms   []WorkflowForm
	// Problems are the installed packs that could not be read.
	Problems []string
}

// WorkflowForm is one workflow's start form.
type WorkflowForm struct {
	// Ref is what the form posts as the workflow: NAME or PACK/WORKFLOW.
	Ref, Scope, Description, Version string
	Fields                           []InputField
	// Invalid lists the problems of a workflow that does not load.
	Invalid []string
	// Error is why the last start of this form was refused; Open keeps
	// the form unfolded.
	Error string
	Open  bool
}

// InputField is one input of a start form.
type InputField struct {
	Name, Description string
	// Type is the declared type; Control the form control: text, number,
	// integer, boolean, select (an enum) or array.
	Type, Control string
	Required      bool
	// Value is what the field holds: the value last posted, else the
	// default; Default is the declared default's text.
	Value, Default string
	Options        []string
	Pattern        string
}

// FormOf is wf's start form, its fields holding values (the ones posted
// back after a refusal) or else the defaults.
func FormOf(ref, scope string, wf *workflow.Workflow, values map[string]string) WorkflowForm {
	f := WorkflowForm{Ref: ref, Scope: scope, Description: wf.Description, Version: wf.Version}
	for _, in := range wf.Inputs {
		fl := InputField{Name: in.Name, Description: in.Description, Type: in.Type, Required: in.Required, Control: in.Type}
		if in.Default != nil {
			fl.Default = *in.Default
		}
		fl.Value = fl.Default
		if v, ok := values[in.Name]; ok {
			fl.Value = v
		}
		switch in.Type {
		case workflow.InputString, "":
			fl.Control = "text"
		}
		if v := in.Validation; v != nil {
			if len(v.Enum) > 0 {
				fl.Control, fl.Options = "select", v.Enum
			}
			fl.Pattern = v.Pattern
		}
		f.Fields = append(f.Fields, fl)
	}
	return f
}
