// Package exitcode holds the exit statuses of reel's commands. reel follows
// AWF's table (docs/reference/exit-codes.md of AWF), so that a script
// written against `awf run` or `awf validate` reads reel's status the same
// way:
//
//	0  success
//	1  user error: a bad flag or input, a workflow or file not found, a
//	   required input or environment variable missing
//	2  workflow error: the workflow file is invalid (every problem is
//	   printed as file:line:col)
//	3  execution error: the run failed (a failing step without a handler,
//	   a failure terminal, a timeout, a template that cannot render)
//	4  system error: reel itself could not work (storage not writable,
//	   an I/O error)
//
// Two statuses are reel's own: a cancelled run (Ctrl-C, SIGTERM) exits
// 130, as shells report an interrupted command (AWF exits 0 there, which
// reads as success); and an inline on_failure with an explicit status
// exits with that status, as AWF's documentation says it should.
package exitcode

// Exit statuses.
const (
	OK        = 0
	User      = 1
	Workflow  = 2
	Execution = 3
	System    = 4
	Cancelled = 130
)
