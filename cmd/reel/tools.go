package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/query"
	"github.com/reelhq/reel/transcript"
)

func newToolsCmd() *cobra.Command {
	var (
		refs     runRefFlags
		asJSON   bool
		fidelity string
	)
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
		RunE: func(cmd *cobra.Command, args []string) error {
			f := transcript.Fidelity(fidelity)
			if f != "" && !f.Known() {
				return fmt.Errorf("--fidelity %q: want router or agent_emitted", fidelity)
			}
			list, err := refs.resolve(args, 1)
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
	cmd.Flags().StringVar(&fidelity, "fidelity", "", "list only the calls of this fidelity: router or agent_emitted")
	return cmd
}
