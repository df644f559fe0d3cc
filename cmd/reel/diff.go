package main

import (
	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/query"
	"github.com/spf13/cobra"
)

func newDiffCmd() *cobra.Command {
	var (
		refs   runRefFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "diff RUN_A RUN_B",
		Short: "Compare two runs of a workflow step by step",
		Long: `Compare two runs of the same workflow execution by execution: status, duration,
tokens, the sequence of tools called, and whether the output text changed.
Executions are matched by path, loop iterations and attempt; '=' marks the
ones that match, '~' the ones that differ, '-' and '+' those only in A or B.
With --latest, the latest run is RUN_A and the one argument is RUN_B.

Exit status, as diff(1)'s: 0 the runs match (durations aside), 1 they
differ, 2 they could not be compared.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := refs.resolve(args, 2)
			if err != nil {
				return err
			}
			prices, err := priceTable()
			if err != nil {
				return err
			}
			a, err := exectree.Build(list[0], exectree.Options{Prices: prices})
			if err != nil {
				return err
			}
			b, err := exectree.Build(list[1], exectree.Options{Prices: prices})
			if err != nil {
				return err
			}
			d := query.Compare(a, b)
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, d); err != nil {
					return err
				}
			} else if err := query.RenderDiff(out, d); err != nil {
				return err
			}
			if err := reportWarnings(cmd, d.Warnings); err != nil {
				return err
			}
			if d.Differs() {
				// as diff(1): 1 when the inputs differ
				return &exitError{code: exitNo}
			}
			return nil
		},
	}
	refs.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	return cmd
}
