package runs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

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

// tailSize is how much of a transcript's end Summarize reads to find its
// last line; run.completed is short.
const tailSize = 64 << 10

// Summarize reads the run's first event (run.started) and its last line
// only, so that listing thousands of runs stays fast.
func (r *Run) Summarize() (Summary, error) {
	f, err := safefile.Open(r.Path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	first, err := firstEvent(f)
	if err != nil {
		return Summary{}, fmt.Errorf("first event: %w", err)
	}
	s := Summary{RunID: first.RunID, ParentRunID: first.ParentRunID, Started: first.Timestamp, Path: r.Path}
	if p := first.Step(); p != nil {
		s.Workflow = p.Name
	}
	last, err := lastEvent(f)
	if err != nil {
		return s, err
	}
	if last.Type != transcript.RunCompleted {
		s.Status = runstatus.Interrupted
		if live, err := transcript.WritingFile(f); err == nil && live {
			s.Status = runstatus.Running
		}
		if !last.Timestamp.IsZero() {
			s.DurationMS = max(0, last.Timestamp.Sub(s.Started).Milliseconds())
		}
		return s, nil
	}
	p := last.Step()
	st, rr := runstatus.Completed(p)
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

// First reads the run's first event alone. An event of a type outside the
// vocabulary is returned as it is.
func (r *Run) First() (transcript.ExchangeEvent, error) {
	f, err := safefile.Open(r.Path)
	if err != nil {
		return transcript.ExchangeEvent{}, fmt.Errorf("open transcript %s: %w", r.Path, err)
	}
	defer f.Close()
	ev, err := firstEvent(f)
	if err != nil {
		return ev, fmt.Errorf("%s: first event: %w", r.Path, err)
	}
	return ev, nil
}

// firstEvent decodes the file's first line.
func firstEvent(f *os.File) (transcript.ExchangeEvent, error) {
	line, err := bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<62), 64<<10).ReadSlice('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		if errors.Is(err, io.EOF) {
			return transcript.ExchangeEvent{}, transcript.ErrEmpty
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return transcript.ExchangeEvent{}, err
		}
		// a first line longer than 64 KiB: read it whole, under the
		// reader's limits
		ev, err := transcript.NewReader(io.NewSectionReader(f, 0, 1<<62)).Next()
		return ev, forward(err)
	}
	ev, err := transcript.DecodeEvent(bytes.TrimRight(line, "\n"))
	return ev, forward(err)
}

// forward drops the errors that only say an event comes from a newer reel.
func forward(err error) error {
	if errors.Is(err, transcript.ErrUnknownEventType) || errors.Is(err, transcript.ErrUnknownBlockType) {
		return nil
	}
	return err
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

// Untimed reports whether the run whose run.started payload is sp is an
// import of a recording that gave none of its events a time (a provider
// stream, Codex exec JSON: the importer's result.import.untimed). Its
// events all carry the source file's modification time, the best bound
// known, by which it sorts; readers show neither a start nor a duration.
func Untimed(sp *transcript.StepPayload) bool {
	if sp == nil || sp.Result == nil {
		return false
	}
	var r struct {
		Import *struct {
			Untimed bool `json:"untimed"`
		} `json:"import"`
	}
	return transcript.DecodeResult(sp.Result, &r) == nil && r.Import != nil && r.Import.Untimed
}
