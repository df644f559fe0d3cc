package agentlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/reelhq/reel/internal/safefile"
)

// Shadow's parser defaults.
const (
	DefaultMaxLineBytes  = 16 << 20
	DefaultMaxTotalBytes = 1 << 30
)

// ReadOptions tune a Reader. Zero values mean Shadow's defaults and full
// verification.
type ReadOptions struct {
	MaxLineBytes  int
	MaxTotalBytes int64
	// AcceptIDMismatch accepts records whose id is not the content hash of
	// their payload (reel import --no-verify-ids).
	AcceptIDMismatch bool
}

// Reader reads the records of one trace, checking each against the format:
// envelope shape, content id, and parent links (the first record is a
// metadata root with a null parent; every other parent names an earlier
// record). Any problem ends the read with a *RecordError.
type Reader struct {
	br    *bufio.Reader
	opts  ReadOptions
	line  int
	total int64
	seen  map[string]bool
	err   error
	buf   []byte
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader, opts ReadOptions) *Reader {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.MaxTotalBytes <= 0 {
		opts.MaxTotalBytes = DefaultMaxTotalBytes
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), opts: opts, seen: map[string]bool{}}
}

// Next returns the next record, or io.EOF after the last one. Blank lines
// are skipped. After an error every call returns the same error.
func (r *Reader) Next() (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	rec, err := r.next()
	if err != nil {
		r.err = err
	}
	return rec, err
}

func (r *Reader) next() (Record, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			return Record{}, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		rec, err := ParseRecord(line)
		if err != nil {
			return rec, &RecordError{Line: r.line, ID: rec.ID, Kind: rec.Kind, Err: err}
		}
		if err := r.check(&rec); err != nil {
			return rec, &RecordError{Line: r.line, ID: rec.ID, Kind: rec.Kind, Err: err}
		}
		r.seen[rec.ID] = true
		return rec, nil
	}
}

func (r *Reader) check(rec *Record) error {
	if r.opts.AcceptIDMismatch {
		if rec.ID == "" {
			return fmt.Errorf("%w: empty id", ErrMalformed)
		}
	} else {
		want, err := ContentID(rec.Payload)
		if err != nil {
			return fmt.Errorf("%w: payload: %v", ErrMalformed, err)
		}
		if rec.ID != want {
			return fmt.Errorf("%w (content hash is %s)", ErrIDMismatch, want)
		}
	}
	if len(r.seen) == 0 {
		if rec.Kind != KindMetadata || rec.Parent != "" {
			return fmt.Errorf("%w: the first record must be a metadata root with a null parent", ErrParent)
		}
		return nil
	}
	if rec.Parent == "" {
		return fmt.Errorf("%w: only the first record may have a null parent", ErrParent)
	}
	if !r.seen[rec.Parent] {
		return fmt.Errorf("%w: parent %s is not an earlier record", ErrParent, rec.Parent)
	}
	return nil
}

// readLine returns the next line without its newline, enforcing the limits
// while the line streams in so memory stays bounded.
func (r *Reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	over := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.total += int64(len(chunk))
		if r.total > r.opts.MaxTotalBytes {
			return nil, &RecordError{Line: r.line + 1, Err: fmt.Errorf("%w: over %d bytes", ErrTraceTooLarge, r.opts.MaxTotalBytes)}
		}
		if !over {
			if len(r.buf)+len(chunk) > r.opts.MaxLineBytes+1 {
				over = true
				r.buf = r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			r.line++
			if over {
				return nil, &RecordError{Line: r.line, Err: fmt.Errorf("%w: over %d bytes", ErrLineTooLong, r.opts.MaxLineBytes)}
			}
			return bytes.TrimSuffix(r.buf, []byte{'\n'}), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(r.buf) == 0 && !over {
				return nil, io.EOF
			}
			r.line++
			if over {
				return nil, &RecordError{Line: r.line, Err: fmt.Errorf("%w: over %d bytes", ErrLineTooLong, r.opts.MaxLineBytes)}
			}
			// A final line without newline is complete if it parses; Shadow
			// writes one record per line and tolerates the missing LF.
			return r.buf, nil
		default:
			return nil, fmt.Errorf("read trace: %w", err)
		}
	}
}

// ReadAll reads every record of a trace.
func ReadAll(r io.Reader, opts ReadOptions) ([]Record, error) {
	rd := NewReader(r, opts)
	var recs []Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			if len(recs) == 0 {
				return nil, fmt.Errorf("%w: empty trace", ErrMalformed)
			}
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
}

// ReadFile reads the trace at path.
func ReadFile(path string, opts ReadOptions) ([]Record, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace %s: %w", path, err)
	}
	defer f.Close()
	recs, err := ReadAll(f, opts)
	if err != nil {
		return recs, fmt.Errorf("read trace %s: %w", path, err)
	}
	return recs, nil
}
