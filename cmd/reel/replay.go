package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/internal/textview"
	"github.com/reelhq/reel/internal/webview"
	"github.com/reelhq/reel/transcript/secrets"
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
		outFile  string
		mask     bool
		redacts  []string
	)
	cmd := &cobra.Command{
		Use:   "replay RUN|--latest",
		Short: "Replay a run's exchange as a readable conversation",
		Long: `Replay a run as a conversation, in order: each step, the prompt and system
prompt, the assistant's text, its thinking (folded unless --thinking), every
tool call with its input and result, command steps with their command, exit
code and output, and the sub-workflows it called, inline.

--format html -o FILE writes the run page of reel serve as one self-contained
file (inline style and script, no external address) that opens from disk:
execution tree, timeline, conversation with folding, and playback with a
speed control. --redact REGEX (repeatable) removes what it matches from every
string before the file is written. --mask-secrets masks secret-looking
environment values and key shapes in every format.

On a terminal the replay is paced by the original timestamps (--speed 1,
gaps capped at 2s before the speed-up) and coloured; piped, it is written at
once and plain. --format markdown writes Markdown for sharing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := refs.resolve(args, 1)
			if err != nil {
				return err
			}
			if format == "html" {
				return replayHTML(cmd, list[0], outFile, mask, redacts)
			}
			if outFile != "" || len(redacts) > 0 {
				return fmt.Errorf("-o and --redact go with --format html")
			}
			out := cmd.OutOrStdout()
			tty := isTerminal(out)
			opts := textview.Options{
				Format:   textview.Format(format),
				Step:     step,
				Thinking: thinking,
				MaxLines: maxLines,
			}
			if mask {
				opts.Masker = secrets.NewMasker(os.Environ())
			}
			switch color {
			case "auto":
				opts.Color = useColor(cmd, out)
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
			case tty && format == string(textview.Text):
				opts.Speed = 1
				opts.MaxGap = defaultReplayGap
			}
			warnings, err := textview.Replay(cmd.Context(), out, list[0], opts)
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
	fl.StringVar(&format, "format", "text", "output format: text, markdown or html")
	fl.StringVarP(&outFile, "output", "o", "", "write the html replay to this `FILE` (- for stdout)")
	fl.BoolVar(&mask, "mask-secrets", false, "mask secret-looking environment values and key shapes in the replay")
	fl.StringArrayVar(&redacts, "redact", nil, "html: replace what this Go `REGEX` matches with [REDACTED] (repeatable)")
	fl.StringVar(&color, "color", "auto", "colour: auto (on a terminal), always or never")
	fl.IntVar(&maxLines, "max-lines", 40, "cut tool and command outputs to this many lines (0: no limit)")
	cmd.MarkFlagsMutuallyExclusive("speed", "instant")
	return cmd
}

// replayHTML writes the self-contained html replay of the run.
func replayHTML(cmd *cobra.Command, src *runs.Run, outFile string, mask bool, redacts []string) error {
	if outFile == "" {
		return fmt.Errorf("--format html needs -o FILE (or -o - for stdout)")
	}
	var masker *secrets.Masker
	if mask {
		masker = secrets.NewMasker(os.Environ())
	}
	var red *webview.Redactor
	if mask || len(redacts) > 0 {
		var err error
		if red, err = webview.NewRedactor(masker, redacts); err != nil {
			return &exitError{code: 2, msg: err.Error()}
		}
	}
	run, err := webview.LoadRun(src, webview.RunOptions{Redact: red})
	if err != nil {
		return err
	}
	views, err := webview.New()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := views.Render(&buf, &webview.Page{Name: "run", Title: run.Workflow, Standalone: true, Data: run}); err != nil {
		return err
	}
	if outFile == "-" {
		_, err = cmd.OutOrStdout().Write(buf.Bytes())
	} else {
		err = safefile.WriteFile(outFile, buf.Bytes())
	}
	if err != nil {
		return err
	}
	return reportWarnings(cmd, run.Warnings)
}
