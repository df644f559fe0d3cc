package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/query"
	"github.com/reelhq/reel/transcript"
)

// toolsOptions are the flags of `reel tools`.
type toolsOptions struct {
	refs     runRefFlags
	asJSON   bool
	fidelity string
}

func newToolsCmd() *cobra.Command {
	var o toolsOptions
	cmd := &cobra.Command{
		Use:   "tools RUN|--latest",
		Short: "List a run's tool calls with their results, fidelity, duration and errors",
		Long: `List every tool invocation of a run and of the sub-workflows it called: the
tool.call and its tool.result paired by call id, with fidelity (router or
agent_emitted), the time between them, the error, and DANGLING for calls that
never got a real result (closed with "no result: …" or not closed at all).

--fidelity router lists only the calls reel's own tool router ran and
recorded (an HTTP provider's tools, a CLI agent's tools through mcp_proxy);
--fidelity agent_emitted only those an agent reported in its own stream.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTools(cmd, args, &o) },
	}
	o.refs.register(cmd)
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the pairs as JSON")
	cmd.Flags().StringVar(&o.fidelity, "fidelity", "", "list only the calls of this fidelity: router or agent_emitted")
	return cmd
}

func runTools(cmd *cobra.Command, args []string, o *toolsOptions) error {
	f := transcript.Fidelity(o.fidelity)
	if f != "" && !f.Known() {
		return fmt.Errorf("--fidelity %q: want router or agent_emitted", o.fidelity)
	}
	list, err := o.refs.resolve(args, 1)
	if err != nil {
		return err
	}
	pairs, warnings, err := query.Tools(list[0])
	if err != nil {
		return err
	}
	if f != "" {
		pairs = query.WithFidelity(pairs, f)
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
