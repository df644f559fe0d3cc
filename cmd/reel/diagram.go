package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/diagram"
)

func newDiagramCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "diagram FILE|NAME",
		Short: "Draw a workflow as Graphviz DOT or a Mermaid flowchart",
		Long: `Draw a workflow's states and flow: one node per state, shaped by its kind,
loop bodies and parallel branches grouped under their block, on_failure
edges in red, transitions labelled with their condition.

  reel diagram deploy | dot -Tsvg > deploy.svg
  reel diagram deploy --format mermaid   # paste into Markdown`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorkflows,
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := findProject()
			if err != nil {
				return err
			}
			wf, err := loadWorkflow(cmd, newEngine(proj, "", nil), args[0])
			if err != nil {
				return err
			}
			switch format {
			case "dot":
				return diagram.DOT(cmd.OutOrStdout(), wf)
			case "mermaid":
				return diagram.Mermaid(cmd.OutOrStdout(), wf)
			}
			return &exitError{code: exitUser, msg: fmt.Sprintf("--format %q: want dot or mermaid", format)}
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "dot", "dot (Graphviz) or mermaid")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"dot\tGraphviz", "mermaid\tMermaid flowchart"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
