package main

import (
	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/exitcode"
)

// Exit statuses. run, resume and validate use AWF's (package exitcode,
// README "Exit codes"); the reading commands answer like diff(1) and
// grep(1): 1 when the answer is "no" (runs differ, a transcript breaks a
// rule, damage was read around), 2 when there is no answer (bad arguments,
// no such run).
const (
	// exitUser: a bad flag or argument, invalid inputs, an unknown
	// workflow or run, a run that cannot be resumed.
	exitUser = exitcode.User
	// exitWorkflow: the workflow file is invalid.
	exitWorkflow = exitcode.Workflow
	// exitExecution: the run started and did not succeed.
	exitExecution = exitcode.Execution
	// exitSystem: reel itself could not work: storage, transcript or
	// terminal I/O.
	exitSystem = exitcode.System

	// exitCancelled: SIGINT or SIGTERM stopped the command.
	exitCancelled = exitcode.Cancelled

	// exitNo and exitTrouble are the reading commands' 1 and 2.
	exitNo      = 1
	exitTrouble = 2
)

// awfUsage makes cmd's bad flags and wrong argument counts a user error
// (exit 1), as AWF's exit-code table has it for run, resume, validate and diagram
// ("Invalid flag"); cobra's errors would otherwise exit 2, the reading
// commands' "no answer".
func awfUsage(cmd *cobra.Command) *cobra.Command {
	args := cmd.Args
	if args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return &exitError{code: exitUser, msg: err.Error()}
			}
			return nil
		}
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: exitUser, msg: err.Error()}
	})
	return cmd
}

// errInterrupted ends a command that SIGINT or SIGTERM stopped before it
// finished (main's context ended).
var errInterrupted = &exitError{code: exitCancelled, msg: "interrupted"}
