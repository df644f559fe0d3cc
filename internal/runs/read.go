package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/transcript"
)

// Mode says how much of each line a read decodes before it yields it.
// Whatever the mode, a record decodes more on demand (Record.Envelope,
// Record.Event), at the same cost and under the same damage policy.
type Mode uint8

const (
	// RawLines finds each line's type and nothing else: the fastest read,
	// for readers that look at raw bytes (reel events).
	RawLines Mode = iota
	// EnvelopeOnly parses each line's envelope (seq, run ids, type, path,
	// iteration, timestamp) and leaves the payload raw: for readers that
	// count and route events (stats, the tree).
	EnvelopeOnly
	// FullDecode decodes each event whole.
	FullDecode
)

// Record is one line of a transcript as a read yields it. It is valid
// until the read moves on: keep what it holds (an event may be copied), not
// the record.
type Record struct {
	// Line is the line's number in the file, from 1.
	Line int
	// Offset is where the line starts in the file.
	Offset int64
	// Type is the event's type: one of the transcript package's constants,
	// or, in a file from a newer reel, a type outside them.
	Type transcript.EventType
	// Raw is the line without its newline.
	Raw []byte

	rd       *reading
	env      Envelope
	ev       transcript.ExchangeEvent
	envState state
	evState  state
	// damaged is set once the line's damage is reported: a line counts
	// once, whatever is asked of it.
	damaged bool
}

type state uint8

const (
	unread state = iota
	good
	bad
)

// Envelope returns the line's envelope, parsing it the first time it is
// asked for. It is nil when the envelope is broken: that is reported as
// damage (Run.Warnings), once.
func (rec *Record) Envelope() *Envelope {
	switch rec.envState {
	case unread:
		if err := rec.env.Parse(rec.Raw); err != nil {
			rec.envState = bad
			rec.damage(err)
			return nil
		}
		rec.envState = good
	case bad:
		return nil
	}
	return &rec.env
}

// Event returns the event, decoding it the first time it is asked for. It
// is nil when the line does not decode: that is reported as damage, once.
// An event holding a block of a type outside the vocabulary is returned,
// and reported.
func (rec *Record) Event() *transcript.ExchangeEvent {
	switch rec.evState {
	case unread:
		ev, err := rec.rd.rd.Decode(rec.Raw)
		rec.ev = ev
		if err != nil && !errors.Is(err, transcript.ErrUnknownEventType) {
			if !errors.Is(err, transcript.ErrUnknownBlockType) {
				rec.evState = bad
				rec.damage(err)
				return nil
			}
			rec.damage(err)
		}
		rec.evState = good
	case bad:
		return nil
	}
	return &rec.ev
}

func (rec *Record) damage(err error) {
	if !rec.damaged {
		rec.damaged = true
		rec.rd.damage(rec.Line, err)
	}
}

// Events reads the run's transcript, yielding each event line decoded as
// far as mode says; with types, only the lines of those types.
//
// Damage does not stop a read, nor reach the loop: a line that is not an
// event (not JSON, no type, a broken envelope or payload in the mode's
// decoding, over the line limit) is left out, a torn final line is used
// only when it is a whole event, an event of a type outside the
// vocabulary is yielded; each is reported in Run.Warnings. A file over
// the size limit ends the read there, with a warning. The error is for a
// read that cannot start or go on (the file cannot be opened or read, or
// holds not a single line: transcript.ErrEmpty); it comes last. With
// Options.Strict, damaged lines are yielded with their error instead.
func (r *Run) Events(mode Mode, types ...transcript.EventType) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		r.status = ""
		f, err := safefile.Open(r.Path)
		if err != nil {
			yield(nil, fmt.Errorf("open transcript %s: %w", r.Path, err))
			return
		}
		defer f.Close()
		rd := &reading{run: r, rd: transcript.NewReader(f), mode: mode, types: types}
		rd.rd.SetLimits(r.opts.Limits)
		if !rd.lines(yield) {
			return
		}
		if rd.rd.Line() == 0 {
			yield(nil, fmt.Errorf("%s: %w", r.Path, transcript.ErrEmpty))
			return
		}
		r.status = rd.status(f)
	}
}

// reading is the state of one read of one file.
type reading struct {
	run   *Run
	rd    *transcript.Reader
	mode  Mode
	types []transcript.EventType
	rec   Record
	// ended is set while the last attempt has its run.completed, whose
	// status is completed.
	ended     bool
	completed string
}

// lines yields the file's records; false means the read is over (the loop
// stopped, or an error was yielded).
func (rd *reading) lines(yield func(*Record, error) bool) bool {
	strict := rd.run.opts.Strict
	for {
		line, err := rd.rd.NextLine()
		if err == io.EOF {
			return true
		}
		torn := false
		if err != nil {
			var le *transcript.LineError
			if !errors.As(err, &le) {
				yield(nil, fmt.Errorf("read transcript %s: %w", rd.run.Path, err))
				return false
			}
			if strict {
				if !rd.yieldStrict(yield, line, err) || errors.Is(err, transcript.ErrFileTooLarge) {
					return false
				}
				continue
			}
			rd.damage(0, err)
			if errors.Is(err, transcript.ErrFileTooLarge) {
				return true
			}
			if !errors.Is(err, transcript.ErrTornLine) || !json.Valid(line) {
				continue
			}
			// A torn tail is not part of the durable record; it is used
			// only in the rare case it is a whole event.
			torn = true
		}
		rec := rd.next(line, torn)
		rec.damaged = torn // reported above
		if strict {
			if !rd.yieldStrict(yield, line, nil) {
				return false
			}
			continue
		}
		tv, ok, terr := lineType(line)
		if terr != nil || !ok {
			rd.damage(rec.Line, errNotEvent)
			continue
		}
		rec.Type = eventType(tv)
		if !rec.Type.Known() {
			rec.damage(fmt.Errorf("%w %q", transcript.ErrUnknownEventType, rec.Type))
		}
		rd.lifecycle(rec)
		if !rd.wanted(rec.Type) {
			continue
		}
		switch rd.mode {
		case EnvelopeOnly:
			if rec.Envelope() == nil {
				continue
			}
		case FullDecode:
			if rec.Event() == nil {
				continue
			}
		}
		if !yield(rec, nil) {
			return false
		}
	}
}

// errNotEvent is the damage of a line without a type.
var errNotEvent = errors.New("not a transcript event")

// next readies the record of line.
func (rd *reading) next(line []byte, torn bool) *Record {
	start := rd.rd.Offset() - int64(len(line))
	if !torn {
		start--
	}
	// Field by field: the record is reused, and clearing it whole (an
	// event's worth of pointers) would cost every line a write barrier's
	// worth of work while the collector runs.
	rec := &rd.rec
	rec.Line, rec.Offset, rec.Raw, rec.rd = rd.rd.Line(), start, line, rd
	rec.Type, rec.envState, rec.evState, rec.damaged = "", unread, unread, false
	return rec
}

// yieldStrict yields a line and its damage as transcript.Reader.Next gives
// them: the event as far as it decodes, with the error.
func (rd *reading) yieldStrict(yield func(*Record, error) bool, line []byte, lerr error) bool {
	rec := rd.next(line, errors.Is(lerr, transcript.ErrTornLine))
	rec.evState, rec.ev = good, transcript.ExchangeEvent{}
	var err error
	if line != nil {
		rec.ev, err = rd.rd.Decode(line)
		rec.Type = rec.ev.Type
		if lerr == nil {
			rd.lifecycle(rec)
		}
	}
	if lerr != nil {
		err = lerr
	}
	return yield(rec, err)
}

// lifecycle follows the run's attempts, for Run.Status: a run.started opens
// one, a run.completed that decodes closes it.
func (rd *reading) lifecycle(rec *Record) {
	switch rec.Type {
	case transcript.RunStarted:
		rd.ended = false
	case transcript.RunCompleted:
		if ev := rec.Event(); ev != nil {
			rd.ended = true
			rd.completed, _ = runstatus.Completed(ev.Step())
		}
	}
}

func (rd *reading) wanted(t transcript.EventType) bool {
	if len(rd.types) == 0 {
		return true
	}
	for _, w := range rd.types {
		if w == t {
			return true
		}
	}
	return false
}

// status is the run's status at the end of a read of f.
func (rd *reading) status(f *os.File) string {
	if rd.ended {
		return rd.completed
	}
	if live, err := transcript.WritingFile(f); err == nil && live {
		return runstatus.Running
	}
	return runstatus.Interrupted
}

// damage reports a line that could not be read whole, under one kind per
// cause, so that a file of a million bad lines gives a few messages and a
// count. line 0 means the error locates itself (a *transcript.LineError).
func (rd *reading) damage(line int, err error) {
	msg := rd.run.Path + ": " + err.Error()
	var le *transcript.LineError
	if line > 0 && !errors.As(err, &le) {
		msg = fmt.Sprintf("%s: line %d: %v", rd.run.Path, line, err)
	}
	rd.run.opts.Warnings.Add(damageKind(err), msg)
}

// damageKind names the cause of damage, for warn.List.
func damageKind(err error) string {
	for _, k := range []error{transcript.ErrTornLine, transcript.ErrLineTooLong, transcript.ErrFileTooLarge,
		transcript.ErrUnknownEventType, transcript.ErrUnknownBlockType, errNotEvent} {
		if errors.Is(err, k) {
			return "damage: " + k.Error()
		}
	}
	return "damage: malformed"
}

// eventType returns the type named by b, without allocating for the types
// of the vocabulary: the comparison converts b without a copy.
func eventType(b []byte) transcript.EventType {
	for _, t := range transcript.EventTypes {
		if string(t) == string(b) {
			return t
		}
	}
	return transcript.EventType(b)
}
