package main

import (
	"fmt"

	"github.com/reelhq/reel/internal/replay"
	"github.com/reelhq/reel/transcript"
	"github.com/spf13/cobra"
)

func newReplayCmd() *cobra.Command {
	var (
		refs     runRefFlags
		step     string
		speed    float64
		instant  bool
		thinking bool
		format   string
		color    string
		maxLines int
	)
	cmd := &cobra.Command{
		Use:   "replay RUN|--latest",
		Short: "Replay a run's exchange as a readable conversation",
		Long: `Replay a run as a conversation, in order: each step, the prompt and system
prompt, the assistant's text, its thinking (folded unless --thinking), every
tool call with its input and result, command steps with their command, exit
code and output, and the sub-workflows it called, inline.

On a terminal the replay is paced by the original timestamps (--speed 1,
gaps capped at 2s before the speed-up) and coloured; piped, it is written at
once and plain. --format markdown writes Markdown for sharing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := refs.resolve(args, 1)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			tty := isTerminal(out)
			opts := replay.Options{
				Format:   replay.Format(format),
				Step:     step,
				Thinking: thinking,
				MaxLines: maxLines,
				Limits:   transcript.Limits{},
			}
			switch color {
			case "auto":
				opts.Color = tty
			case "always":
				opts.Color = true
			case "never":
			default:
				return fmt.Errorf("--color %q: want auto, always or never", color)
			}
			switch {
			case instant:
			case cmd.Flags().Changed("speed"):
				if speed <= 0 {
					return fmt.Errorf("--speed must be above 0")
				}
				opts.Speed = speed
			case tty && format == string(replay.Text):
				opts.Speed = 1
				opts.MaxGap = defaultReplayGap
			}
			warnings, err := replay.Replay(cmd.Context(), out, paths[0], opts)
			if err != nil {
				return err
			}
			return reportWarnings(cmd, warnings)
		},
	}
	refs.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&step, "step", "", "replay only this step path and the steps below it (glob allowed)")
	fl.Float64Var(&speed, "speed", 1, "pace by the original timestamps, this many times faster")
	fl.BoolVar(&instant, "instant", false, "write everything at once (the default when not on a terminal)")
	fl.BoolVar(&thinking, "thinking", false, "show thinking blocks instead of folding them")
	fl.StringVar(&format, "format", "text", "output format: text or markdown")
	fl.StringVar(&color, "color", "auto", "colour: auto (on a terminal), always or never")
	fl.IntVar(&maxLines, "max-lines", 40, "cut tool and command outputs to this many lines (0: no limit)")
	cmd.MarkFlagsMutuallyExclusive("speed", "instant")
	return cmd
}
