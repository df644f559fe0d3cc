package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/workflow"
)

// AWF's command lines, as its documentation writes them (awf run deploy
// --output streaming --format json, awf status ID -f quiet), run under
// reel unchanged: these flags take AWF's values and map them onto reel's
// own options.

// outputMode is AWF's run --output: how the display shows what steps print.
type outputMode struct{ mode *engine.StepOutput }

var outputModes = map[string]engine.StepOutput{
	"streaming": engine.StreamOutput,
	"buffered":  engine.BufferOutput,
	"silent":    engine.HideOutput,
}

func (o outputMode) String() string {
	for name, m := range outputModes {
		if m == *o.mode {
			return name
		}
	}
	return ""
}

func (o outputMode) Set(s string) error {
	m, ok := outputModes[s]
	if !ok {
		return fmt.Errorf("invalid output mode: %s (valid: silent, streaming, buffered)", s)
	}
	*o.mode = m
	return nil
}

func (outputMode) Type() string { return "mode" }

func addOutputFlag(cmd *cobra.Command, mode *engine.StepOutput) {
	cmd.Flags().VarP(outputMode{mode}, "output", "o",
		"how steps' output shows: streaming (each line as printed), buffered (a step's lines once it ends), silent (none; the transcript keeps all)")
}

// format is AWF's --format/-f: json and quiet set reel's --json and
// --quiet; text and table are reel's usual display.
type format struct {
	name        string
	json, quiet *bool
}

func (f *format) String() string { return f.name }

func (f *format) Set(s string) error {
	switch s {
	case "text", "table":
	case "json":
		*f.json = true
	case "quiet":
		*f.quiet = true
	default:
		return fmt.Errorf("invalid output format: %s (valid: text, json, table, quiet)", s)
	}
	f.name = s
	return nil
}

func (*format) Type() string { return "format" }

// addFormatFlag adds -f/--format to cmd, setting *asJSON or *quiet;
// quietMeans says what the command's quiet form prints. The command then
// refuses json with quiet however each was asked for (cobra's exclusive
// groups see only flags, and -f sets either).
func addFormatFlag(cmd *cobra.Command, asJSON, quiet *bool, quietMeans string) {
	cmd.Flags().VarP(&format{name: "text", json: asJSON, quiet: quiet}, "format", "f",
		"AWF's output format: text or table (the usual display), json (as --json), quiet ("+quietMeans+")")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if *asJSON && *quiet {
			return &exitError{code: exitUser, msg: "--json (or --format json) and --quiet (or --format quiet) exclude each other"}
		}
		return nil
	}
}

// noHintsFlag is the root's persistent --no-hints: problems and errors
// leave out their "did you mean" suggestions, as AWF's --no-hints does.
const noHintsFlag = "no-hints"

// hintsOff returns how cmd's messages are to be printed: without their
// suggestions when --no-hints was given.
func hintsOff(cmd *cobra.Command) func(string) string {
	if f := cmd.Flag(noHintsFlag); f != nil && f.Value.String() == "true" {
		return workflow.StripHints
	}
	return func(s string) string { return s }
}

// addVerboseFlag adds AWF's --verbose, whose debug lines say each step as
// it starts; reel's display always does.
func addVerboseFlag(cmd *cobra.Command) {
	cmd.Flags().Bool("verbose", false, "AWF's flag, taken as given: reel's display always shows what it adds (each step as it starts)")
}
