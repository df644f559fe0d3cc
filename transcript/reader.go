package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// LineError locates a problem in a transcript.
type LineError struct {
	Line   int   // 1-based line number
	Offset int64 // byte offset of the line's start
	Err    error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Reader reads events from a transcript stream, one line at a time.
//
// Next returns io.EOF at the end. Errors for a single line are *LineError
// values and do not stop the reader: call Next again to go on with the next
// line. ErrUnknownEventType and ErrUnknownBlockType come with the event
// filled in. A final line without its newline yields ErrTornLine; a line or
// file over the limits yields ErrLineTooLong or ErrFileTooLarge (the latter
// ends the read).
type Reader struct {
	r      io.Reader
	limits Limits
	buf    []byte
	start  int // start of unread data in buf
	end    int // end of data in buf
	eof    bool
	err    error // sticky read error
	line   int
	offset int64 // offset of buf[start] in the stream
	raw    []byte
	rawAt  int64 // offset of raw's start
	dec    decoder
	// skipping is set while discarding the rest of an over-long line.
	skipping bool
}

// NewReader returns a Reader with the default limits.
func NewReader(r io.Reader) *Reader {
	return &Reader{
		r:      r,
		limits: Limits{}.withDefaults(),
		buf:    make([]byte, 256<<10),
		dec:    decoder{intern: make(map[string]string), arena: make([]byte, 0, arenaChunk)},
	}
}

// SetLimits changes the limits; zero fields keep their defaults. Call it
// before the first Next.
func (r *Reader) SetLimits(l Limits) { r.limits = l.withDefaults() }

// Line is the 1-based number of the line Next returned last.
func (r *Reader) Line() int { return r.line }

// Offset is the byte offset just past the line Next returned last.
func (r *Reader) Offset() int64 { return r.offset }

// Raw is the bytes of the line Next returned last, without its newline. It
// is valid until the next call to Next.
func (r *Reader) Raw() []byte { return r.raw }

// NextLine returns the next raw line without decoding it. The slice is valid
// until the next call. Errors are as for Next.
func (r *Reader) NextLine() ([]byte, error) {
	for {
		if r.err != nil {
			return nil, r.err
		}
		if i := bytes.IndexByte(r.buf[r.start:r.end], '\n'); i >= 0 {
			line := r.buf[r.start : r.start+i]
			lineStart := r.offset
			r.start += i + 1
			r.offset += int64(i + 1)
			if r.skipping {
				r.skipping = false
				continue
			}
			r.line++
			if r.offset > r.limits.MaxFileSize {
				r.err = &LineError{Line: r.line, Offset: lineStart, Err: fmt.Errorf("%w: file is over %d bytes", ErrFileTooLarge, r.limits.MaxFileSize)}
				return nil, r.err
			}
			if len(line) > r.limits.MaxLineSize {
				return nil, &LineError{Line: r.line, Offset: lineStart, Err: fmt.Errorf("%w: %d bytes, limit %d", ErrLineTooLong, len(line), r.limits.MaxLineSize)}
			}
			r.raw, r.rawAt = line, lineStart
			return line, nil
		}
		if r.eof {
			if r.start == r.end {
				r.err = io.EOF
				return nil, r.err
			}
			line := r.buf[r.start:r.end]
			lineStart := r.offset
			r.offset += int64(len(line))
			r.start = r.end
			if r.skipping {
				r.skipping = false
				continue
			}
			r.line++
			r.raw, r.rawAt = line, lineStart
			return line, &LineError{Line: r.line, Offset: lineStart, Err: fmt.Errorf("%w: %d bytes without a newline", ErrTornLine, len(line))}
		}
		pending := r.end - r.start
		if pending > r.limits.MaxLineSize {
			// Report the over-long line now and discard it as it streams by,
			// so memory stays bounded by the limit.
			lineStart := r.offset
			r.offset += int64(pending)
			r.start, r.end = 0, 0
			if !r.skipping {
				r.skipping = true
				r.line++
				return nil, &LineError{Line: r.line, Offset: lineStart, Err: fmt.Errorf("%w: over %d bytes", ErrLineTooLong, r.limits.MaxLineSize)}
			}
			continue
		}
		r.fill()
	}
}

func (r *Reader) fill() {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if r.end == len(r.buf) {
		nb := make([]byte, 2*len(r.buf))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	n, err := r.r.Read(r.buf[r.end:])
	r.end += n
	if err == io.EOF {
		r.eof = true
	} else if err != nil {
		r.err = fmt.Errorf("read transcript: %w", err)
	}
}

// Next decodes the next event.
func (r *Reader) Next() (ExchangeEvent, error) {
	line, err := r.NextLine()
	if err != nil {
		if errors.Is(err, ErrTornLine) {
			// Decode what there is: the caller may still want it, but the
			// error says the line is not part of the durable record.
			ev, _ := r.dec.event(line)
			return ev, err
		}
		return ExchangeEvent{}, err
	}
	return r.Decode(line)
}

// Decode decodes the line NextLine returned last as Next would have: with
// the reader's shared strings, and its errors as *LineError. A reader that
// looks at raw lines first decodes only those it needs, at Next's cost.
func (r *Reader) Decode(line []byte) (ExchangeEvent, error) {
	lineStart := r.rawAt
	if len(line) > 0 && line[len(line)-1] == '\r' {
		ev, derr := r.dec.event(line)
		if derr == nil {
			derr = fmt.Errorf("%w: CRLF line ending", ErrMalformed)
		}
		return ev, &LineError{Line: r.line, Offset: lineStart, Err: derr}
	}
	ev, derr := r.dec.event(line)
	if derr != nil {
		return ev, &LineError{Line: r.line, Offset: lineStart, Err: derr}
	}
	return ev, nil
}

// ReadAll decodes every event of a transcript stream. It skips nothing
// silently: the first error that is not a forward-compatibility warning
// stops it and is returned with the events read so far. Events of unknown
// type are included.
func ReadAll(r io.Reader) ([]ExchangeEvent, error) {
	return readAll(r, sizeHint(r))
}

// sizeHint guesses how many bytes r holds, to size the result once.
func sizeHint(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len())
	case *os.File:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return 0
}

func readAll(r io.Reader, size int64) ([]ExchangeEvent, error) {
	rd := NewReader(r)
	// Lines average a few hundred bytes; guessing a little high saves the
	// copies of a growing slice of large structs.
	guess := size/160 + 16
	if guess > 1<<22 {
		guess = 1 << 22
	}
	events := make([]ExchangeEvent, 0, guess)
	for {
		ev, err := rd.Next()
		switch {
		case err == nil:
			events = append(events, ev)
		case err == io.EOF:
			return events, nil
		case errors.Is(err, ErrUnknownEventType), errors.Is(err, ErrUnknownBlockType):
			events = append(events, ev)
		default:
			return events, err
		}
	}
}

// ReadFile reads a whole transcript file with ReadAll. A FIFO or device
// at path is refused with ErrNotRegular without blocking.
func ReadFile(path string) ([]ExchangeEvent, error) {
	f, err := openRead(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript %s: %w", path, err)
	}
	defer f.Close()
	events, err := ReadAll(f)
	if err != nil {
		return events, fmt.Errorf("read transcript %s: %w", path, err)
	}
	return events, nil
}
