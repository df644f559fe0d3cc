// Package runstatus decides what state a run is in, from its transcript, in
// the one vocabulary every command, the web view and the docs use:
//
//   - success, failure, cancelled: the run ended itself, and its last
//     run.completed says which (a resumed run's file holds several runs'
//     worth of lifecycle events; the last span counts);
//   - running: no run.completed closes the last span and a recorder holds
//     the file open (transcript.Writing);
//   - interrupted: no run.completed closes the last span and nobody writes
//     the file: the process died (SIGKILL, a crash, a power cut). reel
//     resume continues such a run.
//
// A read of a run finds its status at the end of the file (runs.Run.Status);
// Open probes a file nobody is reading.
package runstatus

import "github.com/reelhq/reel/transcript"

// The statuses.
const (
	Success     = "success"
	Failure     = "failure"
	Cancelled   = "cancelled"
	Interrupted = "interrupted"
	Running     = "running"
)

// All lists the statuses in the order the docs give them.
var All = []string{Success, Failure, Cancelled, Interrupted, Running}

// Valid reports whether s is one of the statuses.
func Valid(s string) bool {
	for _, x := range All {
		if x == s {
			return true
		}
	}
	return false
}

// FromAWF is s in this vocabulary when it is one of AWF's status names
// (completed, failed), else s.
func FromAWF(s string) string {
	switch s {
	case "completed":
		return Success
	case "failed":
		return Failure
	}
	return s
}

// Ended reports whether a run in status s has finished by itself (it has a
// run.completed).
func Ended(s string) bool { return s == Success || s == Failure || s == Cancelled }

// Completed is the status a run.completed payload gives: its result's
// status, or failure when only an error says how it went.
func Completed(p *transcript.StepPayload) (string, transcript.RunResult) {
	var rr transcript.RunResult
	if p == nil {
		return Success, rr
	}
	if p.Result != nil {
		_ = transcript.DecodeResult(p.Result, &rr)
	}
	switch {
	case rr.Status != "":
		return rr.Status, rr
	case p.Error != "":
		return Failure, rr
	}
	return Success, rr
}

// Open is the status of a run whose last span has no run.completed: running
// while a recorder holds the file, else interrupted.
func Open(path string) string {
	if live, err := transcript.Writing(path); err == nil && live {
		return Running
	}
	return Interrupted
}
