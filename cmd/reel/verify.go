package main

import (
	"fmt"

	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
	"github.com/spf13/cobra"
)

// verifyOptions are the flags of `reel verify`.
type verifyOptions struct {
	asJSON   bool
	skipMode bool
	storage  string
}

func newVerifyCmd() *cobra.Command {
	var o verifyOptions
	cmd := &cobra.Command{
		Use:   "verify [FILE|DIR...]",
		Short: "Check transcripts and their child files against the transcript spec",
		Long: `Check transcripts, and the child transcripts they link, against the schema:
envelope fields, closed vocabularies, seq 1..N in file order, no torn or CRLF
line, mode 0600, file name = run_id = a UUID v4, run.started first and
run.completed last, balanced steps and tool pairs, child links consistent in
both directions. A run without run.completed is reported as interrupted, a
warning that does not fail the check. Without arguments, every transcript in
the storage is checked.

Exit status: 0 clean, 1 violations (one "file:line: problem" line each),
2 when a file cannot be read.`,
		RunE: func(cmd *cobra.Command, args []string) error { return runVerify(cmd, args, &o) },
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&o.storage, "storage", "", storageUsage)
	cmd.Flags().BoolVar(&o.skipMode, "skip-mode", false, "do not require file mode 0600")
	return cmd
}

func runVerify(cmd *cobra.Command, args []string, o *verifyOptions) error {
	if len(args) == 0 {
		dir, err := storageDir(o.storage)
		if err != nil {
			return err
		}
		args = []string{transcript.Dir(dir)}
	}
	rep := verify.Paths(args, verify.Options{SkipMode: o.skipMode})
	out := cmd.OutOrStdout()
	if o.asJSON {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else {
		for _, p := range rep.Problems {
			fmt.Fprintln(out, p.String())
		}
		for _, p := range rep.Unreadable {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: cannot read: %s\n", p.File, p.Message)
		}
		if rep.Violations() == 0 && len(rep.Unreadable) == 0 {
			fmt.Fprintf(out, "ok: %d transcript(s) verified\n", len(rep.Files))
		}
	}
	switch {
	case len(rep.Unreadable) > 0:
		return &exitError{code: 2}
	case rep.Violations() > 0:
		return &exitError{code: 1}
	}
	return nil
}
