package main

import "github.com/reelhq/reel/internal/exitcode"

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

	// exitNo and exitTrouble are the reading commands' 1 and 2.
	exitNo      = 1
	exitTrouble = 2
)
