package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/workflow"
)

// helpExit is the annotation a help function sets to give the command an
// exit status: cobra's help path has no error to return.
const helpExit = "reel-help-exit"

// workflowHelp wraps run's help: `reel run NAME --help` first describes
// workflow NAME (its description and inputs, with types, defaults and
// descriptions), then prints the usual help. An unknown NAME is an error.
func workflowHelp(usual func(*cobra.Command, []string)) func(*cobra.Command, []string) {
	return func(cmd *cobra.Command, args []string) {
		ref := ""
		if pos := cmd.Flags().Args(); len(pos) > 0 {
			ref = pos[0]
		}
		if ref != "" && cmd.Name() == "run" {
			if err := describeWorkflow(cmd, ref); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "reel: %v\n", err)
				if cmd.Annotations == nil {
					cmd.Annotations = map[string]string{}
				}
				cmd.Annotations[helpExit] = fmt.Sprint(exitUser)
				return
			}
		}
		usual(cmd, args)
	}
}

func describeWorkflow(cmd *cobra.Command, ref string) error {
	proj, err := findProject()
	if err != nil {
		return err
	}
	e := newEngine(proj, "", nil)
	wf, err := e.LoadWorkflow(ref)
	var probs workflow.Problems
	if errors.As(err, &probs) {
		return fmt.Errorf("%s is invalid (%d problem(s)); reel validate %s lists them", probs[0].File, len(probs), ref)
	}
	if err != nil {
		return err
	}
	path := wf.File
	w := cmd.OutOrStdout()
	p := palette{on: useColor(cmd, w)}
	fmt.Fprintf(w, "%s %s\n", p.bold("Workflow "+wf.Name), p.dim("("+path+")"))
	if wf.Description != "" {
		fmt.Fprintln(w, wf.Description)
	}
	fmt.Fprintln(w)
	writeInputsTable(w, wf, termWidth(w), p)
	fmt.Fprintln(w)
	return nil
}

// writeInputsTable lists a workflow's inputs.
func writeInputsTable(w io.Writer, wf *workflow.Workflow, width int, p palette) {
	if len(wf.Inputs) == 0 {
		fmt.Fprintln(w, "Inputs: none")
		return
	}
	fmt.Fprintln(w, "Inputs:")
	t := &table{flexible: 4}
	t.add("  NAME", "TYPE", "REQUIRED", "DEFAULT", "DESCRIPTION")
	for _, in := range wf.Inputs {
		req, def := "no", "-"
		if in.Required {
			req = "yes"
		}
		if in.Default != nil {
			def = *in.Default
			if def == "" {
				def = `""`
			}
		}
		desc := in.Description
		if v := in.Validation; v != nil && len(v.Enum) > 0 {
			desc = strings.TrimSpace(desc + " (one of " + strings.Join(v.Enum, ", ") + ")")
		}
		if desc == "" {
			desc = "-"
		}
		t.add("  "+in.Name, in.Type, req, def, desc)
	}
	t.write(w, width)
}
