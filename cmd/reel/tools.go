package main

import (
	"github.com/reelhq/reel/internal/query"
	"github.com/spf13/cobra"
)

func newToolsCmd() *cobra.Command {
	var (
		refs   runRefFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "tools RUN|--latest",
		Short: "List a run's tool calls with their results, fidelity, duration and errors",
		Long: `List every tool invocation of a run and of the sub-workflows it called: the
tool.call and its tool.result paired by call id, with fidelity (router or
agent_emitted), the time between them, the error, and DANGLING for calls that
never got a real result (closed with "no result: …" or not closed at all).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := refs.resolve(args, 1)
			if err != nil {
				return err
			}
			pairs, warnings, err := query.Tools(list[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if pairs == nil {
					pairs = []query.ToolPair{}
				}
				if err := writeJSON(out, pairs); err != nil {
					return err
				}
			} else {
				fitted, flush := fitTo(out, termWidth(out))
				if err := query.RenderTools(fitted, pairs); err != nil {
					return err
				}
				if err := flush(); err != nil {
					return err
				}
			}
			return reportWarnings(cmd, warnings)
		},
	}
	refs.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the pairs as JSON")
	return cmd
}
