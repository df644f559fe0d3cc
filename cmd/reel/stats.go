package main

import (
	"github.com/reelhq/reel/internal/query"
	"github.com/reelhq/reel/internal/runs"
	"github.com/spf13/cobra"
)

func newStatsCmd() *cobra.Command {
	var (
		refs   runRefFlags
		all    bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "stats [RUN...|--latest|--all]",
		Short: "Add up tokens, cost, durations and tool calls per run, step, provider and model",
		Long: `Add up what runs consumed: tokens (input, output, cache, reasoning), cost,
durations and tool calls, in total and per run, step path, provider, model
and tool. Named runs include the sub-workflows they called. Without
arguments, or with --all, every run in the storage is counted.

Cost is what the provider reported, or, for a step whose provider reported
none, its tokens priced from reel's price table (the public models of
Anthropic, OpenAI and Google; extend or override it with the prices key of
.reel/config.yaml). A step whose model has no price is shown as —, and a
total that leaves such steps out ends in +.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var list []*runs.Run
			if all || len(args) == 0 && !refs.latest {
				st, err := refs.store()
				if err != nil {
					return err
				}
				if list, err = st.All(); err != nil {
					return err
				}
			} else {
				roots, err := refs.resolve(args, 0)
				if err != nil {
					return err
				}
				list = runs.WithChildren(roots)
			}
			prices, err := priceTable()
			if err != nil {
				return err
			}
			rep, err := query.Stats(cmd.Context(), list, prices)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, rep); err != nil {
					return err
				}
			} else {
				fitted, flush := fitTo(out, termWidth(out))
				if err := query.RenderStats(fitted, rep); err != nil {
					return err
				}
				if err := flush(); err != nil {
					return err
				}
			}
			return reportWarnings(cmd, rep.Warnings)
		},
	}
	refs.register(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "count every run in the storage")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
