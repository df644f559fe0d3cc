package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/internal/textview"
	"github.com/reelhq/reel/internal/webview"
	"github.com/reelhq/reel/transcript/secrets"
)

// defaultReplayGap caps the pause between two events in a paced replay.
const defaultReplayGap = 2 * time.Second

// replayOptions are the flags of `reel replay`.
type replayOptions struct {
	refs                         runRefFlags
	step, format, color, outFile string
	instant, pace, thinking      bool
	speed                        float64
	maxLines                     int
	// mask is --mask-secrets; redacts are the --redact patterns (html).
	mask    bool
	redacts []string
}

func newReplayCmd() *cobra.Command {
	var o replayOptions
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

The replay is written at once; --pace paces it by the original timestamps
(at --speed, 1 by default; gaps capped at 2s before the speed-up). On a
terminal it is coloured; piped, plain. Escape sequences recorded in the
transcript are never written: they are stripped from every format.
--format markdown writes Markdown for sharing.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReplay(cmd, args, &o) },
	}
	o.refs.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.step, "step", "", "replay only this step path and the steps below it (glob allowed)")
	fl.BoolVar(&o.pace, "pace", false, "pace the replay by the original timestamps (gaps capped at 2s)")
	fl.Float64Var(&o.speed, "speed", 1, "pace, this many times faster than the original")
	fl.BoolVar(&o.instant, "instant", false, "write everything at once (the default)")
	fl.BoolVar(&o.thinking, "thinking", false, "show thinking blocks instead of folding them")
	fl.StringVar(&o.format, "format", "text", "output format: text, markdown or html")
	fl.StringVarP(&o.outFile, "output", "o", "", "write the html replay to this `FILE` (- for stdout)")
	fl.BoolVar(&o.mask, "mask-secrets", false, "mask secret-looking environment values and key shapes in the replay")
	fl.StringArrayVar(&o.redacts, "redact", nil, "html: replace what this Go `REGEX` matches with [REDACTED] (repeatable)")
	fl.StringVar(&o.color, "color", "auto", "colour: auto (on a terminal), always or never")
	fl.IntVar(&o.maxLines, "max-lines", 40, "cut tool and command outputs to this many lines (0: no limit)")
	cmd.MarkFlagsMutuallyExclusive("speed", "instant")
	cmd.MarkFlagsMutuallyExclusive("pace", "instant")
	return cmd
}

func runReplay(cmd *cobra.Command, args []string, o *replayOptions) error {
	list, err := o.refs.resolve(args, 1)
	if err != nil {
		return err
	}
	if o.format == "html" {
		return replayHTML(cmd, list[0], o)
	}
	if o.outFile != "" || len(o.redacts) > 0 {
		return fmt.Errorf("-o and --redact go with --format html")
	}
	out := cmd.OutOrStdout()
	opts, err := o.textOptions(cmd)
	if err != nil {
		return err
	}
	warnings, err := textview.Replay(cmd.Context(), out, list[0], opts)
	if err != nil {
		return err
	}
	return reportWarnings(cmd, warnings)
}

// textOptions are the terminal and Markdown renderer's options the flags
// give.
func (o *replayOptions) textOptions(cmd *cobra.Command) (textview.Options, error) {
	prices, err := priceTable()
	if err != nil {
		return textview.Options{}, err
	}
	opts := textview.Options{
		Format:   textview.Format(o.format),
		Step:     o.step,
		Thinking: o.thinking,
		MaxLines: o.maxLines,
		Prices:   prices,
	}
	if o.mask {
		opts.Masker = secrets.NewMasker(os.Environ())
	}
	if opts.Color, err = colorFlag(cmd, cmd.OutOrStdout(), o.color); err != nil {
		return textview.Options{}, err
	}
	// A real session waits minutes between turns: pacing is asked for
	// (--pace, or a --speed), never assumed.
	if !o.instant && (o.pace || cmd.Flags().Changed("speed")) {
		if o.speed <= 0 {
			return textview.Options{}, fmt.Errorf("--speed must be above 0")
		}
		opts.Speed = o.speed
		opts.MaxGap = defaultReplayGap
	}
	return opts, nil
}

// replayHTML writes the self-contained html replay of the run.
func replayHTML(cmd *cobra.Command, src *runs.Run, o *replayOptions) error {
	if o.outFile == "" {
		return fmt.Errorf("--format html needs -o FILE (or -o - for stdout)")
	}
	var masker *secrets.Masker
	if o.mask {
		masker = secrets.NewMasker(os.Environ())
	}
	var red *webview.Redactor
	if o.mask || len(o.redacts) > 0 {
		var err error
		if red, err = webview.NewRedactor(masker, o.redacts); err != nil {
			return &exitError{code: 2, msg: err.Error()}
		}
	}
	prices, err := priceTable()
	if err != nil {
		return err
	}
	page, warnings, err := webview.Standalone(src, webview.RunOptions{Redact: red, Prices: prices})
	if err != nil {
		return err
	}
	if o.outFile == "-" {
		_, err = cmd.OutOrStdout().Write(page)
	} else {
		err = safefile.WriteFile(o.outFile, page)
	}
	if err != nil {
		return err
	}
	return reportWarnings(cmd, warnings)
}
