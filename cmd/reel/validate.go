package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/workflow"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE|NAME...",
		Short: "Check workflow files and print every problem as file:line:col: problem",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := findProject()
			if err != nil {
				return err
			}
			e := newEngine(proj, "")
			bad := 0
			for _, ref := range args {
				f, err := workflow.Find(ref, ".", proj.Root)
				if err != nil {
					bad++
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %v\n", ref, err)
					continue
				}
				wf, err := workflow.Load(f, e.LoadOptions())
				var probs workflow.Problems
				switch {
				case errors.As(err, &probs):
					bad += len(probs)
					for _, p := range probs {
						fmt.Fprintln(cmd.OutOrStdout(), p)
					}
				case err != nil:
					bad++
					fmt.Fprintf(cmd.OutOrStdout(), "%s:1:1: %v\n", f, err)
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", f)
					for _, w := range wf.Warnings {
						fmt.Fprintln(cmd.OutOrStdout(), w)
					}
				}
			}
			if bad > 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("%d problem(s)", bad)}
			}
			return nil
		},
	}
}
