package main

import (
	"github.com/reelhq/reel/internal/query"
	"github.com/spf13/cobra"
)

// toolsOptions are the flags of `reel tools`.
type toolsOptions struct {
	refs   runRefFlags
	asJSON bool
}

func newToolsCmd() *cobra.Command {
	var o toolsOptions
	cmd := &cobra.Command{
		Use:   "tools RUN|--latest",
		Short: "List a run's tool calls with their results, fidelity, duration and errors",
		Long: `List every tool invocation of a run and of the sub-workflows it called: the
tool.call and its tool.result paired by call id, with fidelity (router or
agent_emitted), the time between them, the error, and DANGLING for calls that
never got a real result (closed with "no result: …" or not closed at all).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTools(cmd, args, &o) },
	}
	o.refs.register(cmd)
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the pairs as JSON")
	return cmd
}

func runTools(cmd *cobra.Command, args []string, o *toolsOptions) error {
	list, err := o.refs.resolve(args, 1)
	if err != nil {
		return err
	}
	pairs, warnings, err := query.Tools(list[0])
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if o.asJSON {
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
}
