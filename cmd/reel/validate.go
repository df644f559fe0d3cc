package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/workflow"
)

// validated is one file's verdict in validate --json.
type validated struct {
	File     string          `json:"file"`
	Valid    bool            `json:"valid"`
	Problems []problemAtJSON `json:"problems"`
	// Warnings do not make the file invalid.
	Warnings []problemAtJSON `json:"warnings,omitempty"`
}

type problemAtJSON struct {
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

func newValidateCmd() *cobra.Command {
	var asJSON, quiet bool
	cmd := &cobra.Command{
		Use:   "validate FILE|NAME...",
		Short: "Check workflow files and print every problem as file:line:col: problem",
		Long: `Check workflow files and print every problem as file:line:col: problem, or,
with --json, one verdict per file.

Exit status (AWF's): 0 every file is valid, 1 a file was not found, 2 a file
is invalid.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeWorkflows,
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := findProject()
			if err != nil {
				return err
			}
			e := newEngine(proj, "")
			out := cmd.OutOrStdout()
			var results []validated
			bad, missing := 0, 0
			for _, ref := range args {
				f, err := workflow.Find(ref, ".", proj.Root)
				if err != nil {
					missing++
					results = append(results, validated{File: ref, Problems: []problemAtJSON{{Message: err.Error()}}})
					if !asJSON {
						fmt.Fprintf(out, "%s: %v\n", ref, err)
					}
					continue
				}
				v := validated{File: f, Valid: true, Problems: []problemAtJSON{}}
				wf, err := workflow.Load(f, e.LoadOptions())
				var probs workflow.Problems
				switch {
				case errors.As(err, &probs):
					bad += len(probs)
					v.Valid = false
					for _, p := range probs {
						v.Problems = append(v.Problems, problemAtJSON{p.Pos.Line, p.Pos.Col, p.Msg})
						if !asJSON {
							fmt.Fprintln(out, p)
						}
					}
				case err != nil:
					bad++
					v.Valid = false
					v.Problems = append(v.Problems, problemAtJSON{1, 1, err.Error()})
					if !asJSON {
						fmt.Fprintf(out, "%s:1:1: %v\n", f, err)
					}
				default:
					if !asJSON && !quiet {
						fmt.Fprintf(out, "%s: ok\n", f)
					}
					for _, w := range wf.Warnings {
						v.Warnings = append(v.Warnings, problemAtJSON{w.Pos.Line, w.Pos.Col, w.Msg})
						if !asJSON {
							fmt.Fprintln(out, w)
						}
					}
				}
				results = append(results, v)
			}
			if asJSON {
				if err := writeJSON(out, results); err != nil {
					return err
				}
			}
			switch {
			case missing > 0:
				return &exitError{code: exitUser, msg: fmt.Sprintf("%d workflow(s) not found, %d problem(s)", missing, bad)}
			case bad > 0:
				return &exitError{code: exitWorkflow, msg: fmt.Sprintf("%d problem(s)", bad)}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one verdict per file as JSON")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only problems")
	return cmd
}
