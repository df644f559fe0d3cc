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
// Summarize reads only a transcript's first line and its end, so listing
// thousands of runs stays fast.
package runstatus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

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

// Summary is one run at a glance.
type Summary struct {
	RunID       string    `json:"run_id"`
	ParentRunID string    `json:"parent_run_id,omitempty"`
	Workflow    string    `json:"workflow"`
	Status      string    `json:"status"`
	ExitCode    *int      `json:"exit_code,omitempty"`
	Started     time.Time `json:"started"`
	// DurationMS is the run's own account when it ended, else the time
	// from its start to its last event.
	DurationMS int64    `json:"duration_ms"`
	Tokens     int64    `json:"tokens"`
	CostUSD    *float64 `json:"cost_usd,omitempty"`
	// Attempts counts the runs of the file (2 after one resume), when the
	// last run.completed says; 0 otherwise.
	Attempts int    `json:"attempts,omitempty"`
	Error    string `json:"error,omitempty"`
	Path     string `json:"path"`
}

// tailSize is how much of a transcript's end is read to find its last
// line; run.completed is short.
const tailSize = 64 << 10

// Summarize reads the transcript at path: its first event (run.started) and
// its last line.
func Summarize(path string) (Summary, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	first, err := firstEvent(f)
	if err != nil {
		return Summary{}, fmt.Errorf("first event: %w", err)
	}
	s := Summary{RunID: first.RunID, ParentRunID: first.ParentRunID, Started: first.Timestamp, Path: path}
	if p := first.Step(); p != nil {
		s.Workflow = p.Name
	}
	last, err := lastEvent(f)
	if err != nil {
		return s, err
	}
	if last.Type != transcript.RunCompleted {
		s.Status = Open(path)
		if !last.Timestamp.IsZero() {
			s.DurationMS = max(0, last.Timestamp.Sub(s.Started).Milliseconds())
		}
		return s, nil
	}
	p := last.Step()
	st, rr := Completed(p)
	s.Status, s.DurationMS, s.Tokens, s.CostUSD = st, rr.DurationMS, rr.Usage.TotalTokens, rr.CostUSD
	ec := rr.ExitCode
	s.ExitCode = &ec
	if p != nil {
		s.Error = p.Error
		if p.Attempt > 1 {
			s.Attempts = p.Attempt
		}
	}
	return s, nil
}

func firstEvent(f *os.File) (transcript.ExchangeEvent, error) {
	line, err := bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<62), 64<<10).ReadSlice('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		if errors.Is(err, io.EOF) {
			return transcript.ExchangeEvent{}, errors.New("empty transcript")
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			// a run.started longer than 64 KiB: read it whole
			return transcript.NewReader(io.NewSectionReader(f, 0, 1<<62)).Next()
		}
		return transcript.ExchangeEvent{}, err
	}
	ev, err := transcript.DecodeEvent(bytes.TrimRight(line, "\n"))
	if err != nil && !errors.Is(err, transcript.ErrUnknownEventType) && !errors.Is(err, transcript.ErrUnknownBlockType) {
		return ev, err
	}
	return ev, nil
}

// lastEvent decodes the file's last complete line; a torn tail (a writer
// mid-line, or one that died there) is passed over.
func lastEvent(f *os.File) (transcript.ExchangeEvent, error) {
	st, err := f.Stat()
	if err != nil {
		return transcript.ExchangeEvent{}, err
	}
	off := max(st.Size()-tailSize, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return transcript.ExchangeEvent{}, err
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	} else {
		return transcript.ExchangeEvent{}, nil
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	} else if off > 0 {
		return transcript.ExchangeEvent{}, nil
	}
	ev, _ := transcript.DecodeEvent(buf)
	return ev, nil
}
