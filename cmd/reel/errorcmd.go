package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/errcode"
)

type errorOptions struct {
	asJSON bool
}

func newErrorCmd() *cobra.Command {
	var o errorOptions
	cmd := &cobra.Command{
		Use:   "error [CODE]",
		Short: "Explain an error code (USER.INPUT.MISSING_FILE), or list them all",
		Long: `Explain one of the error codes reel's errors carry ([USER.INPUT.MISSING_FILE]
… in a message, error_code in --format json): what it means, how to fix it,
and the codes related to it. A prefix (USER, WORKFLOW.VALIDATION) lists the
codes it starts; no argument lists every code. The codes are AWF's, and
their category is the exit status: USER 1, WORKFLOW 2, EXECUTION 3,
SYSTEM 4.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runError(cmd, args, &o) },
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	var quiet bool
	addFormatFlag(cmd, &o.asJSON, &quiet, "only the codes")
	return cmd
}

func runError(cmd *cobra.Command, args []string, o *errorOptions) error {
	query := ""
	if len(args) > 0 {
		query = args[0]
	}
	out := cmd.OutOrStdout()
	if e, ok := errcode.Lookup(errcode.Code(strings.ToUpper(query))); ok {
		if o.asJSON {
			return writeJSON(out, e)
		}
		fmt.Fprintf(out, "Error code: %s (exit status %d)\n\nDescription:\n  %s\n\nResolution:\n  %s\n", e.Code, e.Code.ExitCode(), e.Description, e.Resolution)
		if len(e.Related) > 0 {
			fmt.Fprintln(out, "\nRelated codes:")
			for _, r := range e.Related {
				fmt.Fprintf(out, "  - %s\n", r)
			}
		}
		return nil
	}
	entries := errcode.Search(query)
	if len(entries) == 0 {
		return &exitError{code: exitUser, msg: fmt.Sprintf("error code not found: %s (reel error lists them all)", query)}
	}
	if o.asJSON {
		return writeJSON(out, entries)
	}
	if f := cmd.Flag("format"); f != nil && f.Value.String() == "quiet" {
		for _, e := range entries {
			fmt.Fprintln(out, e.Code)
		}
		return nil
	}
	for i, e := range entries {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s\n  %s\n  Resolution: %s\n", e.Code, e.Description, e.Resolution)
		if len(e.Related) > 0 {
			rel := make([]string, len(e.Related))
			for j, r := range e.Related {
				rel[j] = string(r)
			}
			fmt.Fprintf(out, "  Related: %s\n", strings.Join(rel, ", "))
		}
	}
	return nil
}
