package main

import (
	"github.com/reelhq/reel/internal/exectree"
	"github.com/spf13/cobra"
)

// treeOptions are the flags of `reel tree`.
type treeOptions struct {
	refs   runRefFlags
	asJSON bool
}

func newTreeCmd() *cobra.Command {
	var o treeOptions
	cmd := &cobra.Command{
		Use:   "tree RUN|--latest",
		Short: "Show the execution tree of a run, with status, duration, tokens and cost",
		Long: `Rebuild a run's execution tree from its transcript and the transcripts of the
sub-workflows it called: every step execution on its own line (loop iterations
and retry attempts apart, parallel branches side by side, sub-workflows nested)
with status, duration, tokens and cost. A run without run.completed is shown
as interrupted, and so are the steps it left open.

RUN is a run id, a unique prefix of one, or a transcript file.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTree(cmd, args, &o) },
	}
	o.refs.register(cmd)
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the tree as JSON")
	return cmd
}

func runTree(cmd *cobra.Command, args []string, o *treeOptions) error {
	_, tree, err := o.refs.tree(args)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if o.asJSON {
		if err := writeJSON(out, tree); err != nil {
			return err
		}
	} else if err := exectree.Render(out, tree); err != nil {
		return err
	}
	return reportWarnings(cmd, tree.Warnings)
}
