package transcript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/fsnotify/fsnotify"
)

// FollowOptions configure a Follower.
type FollowOptions struct {
	Limits Limits
	// Poll is how often to look for new lines when neither a recorder in
	// this process nor the operating system (inotify, kqueue, ...) signals
	// writes (default 100ms). With a signal it bounds the wait anyway, in
	// case one is lost (network file systems do not send them).
	Poll time.Duration
	// Stale is how long the file may stay unchanged before the follower
	// checks that its writer is still alive (default 1s). A recorder holds
	// a lock on its file for as long as it writes; when nobody holds it
	// and no run.completed was read, Next returns ErrWriterGone.
	Stale time.Duration
	// wake, when set, is the in-process recorder writing the file.
	wake *Recorder
}

// ErrWriterGone is returned by a Follower whose transcript has no
// run.completed, has stopped growing, and is held open by no recorder: the
// process writing it died (killed, or its machine crashed) and nothing
// more will come.
var ErrWriterGone = errors.New("the transcript's writer is gone")

// Follower reads a transcript from a given seq and then keeps reading as
// the file grows, so a consumer that must see every event (a live view,
// tail -f) never misses one, whatever the fan-out dropped. It ends with
// io.EOF after returning run.completed, and with ErrWriterGone when the
// writer died before writing it.
type Follower struct {
	f        *os.File
	path     string
	from     uint64
	opts     FollowOptions
	buf      []byte
	start    int
	line     int
	dec      decoder
	done     bool
	skipping bool
	// grew is when the file last grew, for the dead-writer check.
	grew time.Time
	raw  []byte
	// watch signals writes to the file from another process; nil when the
	// system could not watch it (the poll alone then).
	watch *fsnotify.Watcher
}

// Follow opens path and returns a follower that yields events with
// seq >= fromSeq (0 and 1 both mean from the start).
func Follow(ctx context.Context, path string, fromSeq uint64, opts FollowOptions) (*Follower, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := openRead(path)
	if err != nil {
		return nil, fmt.Errorf("follow transcript %s: %w", path, err)
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.Poll <= 0 {
		opts.Poll = 100 * time.Millisecond
	}
	if opts.Stale <= 0 {
		opts.Stale = time.Second
	}
	fl := &Follower{
		f:    f,
		path: path,
		from: fromSeq,
		opts: opts,
		grew: time.Now(),
		buf:  make([]byte, 0, 64<<10),
		dec:  decoder{intern: make(map[string]string), arena: make([]byte, 0, arenaChunk)},
	}
	if opts.wake == nil {
		fl.watch = watchWrites(path)
	}
	return fl, nil
}

// watchWrites asks the operating system to signal writes to path, so a
// live view shows an event as soon as it is written rather than at the
// next poll (half a poll later on average).
// It returns nil when it cannot (no inotify instances left, an
// unsupported system): the follower then polls, as it always may.
func watchWrites(path string) *fsnotify.Watcher {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil
	}
	if err := w.Add(path); err != nil {
		w.Close()
		return nil
	}
	return w
}

// Next returns the next event, waiting for it to be written. Per-line
// problems come back as *LineError and do not end the follower.
func (fl *Follower) Next(ctx context.Context) (ExchangeEvent, error) {
	for {
		if fl.done {
			return ExchangeEvent{}, io.EOF
		}
		if i := bytes.IndexByte(fl.buf[fl.start:], '\n'); i >= 0 {
			line := fl.buf[fl.start : fl.start+i]
			fl.start += i + 1
			if fl.skipping {
				fl.skipping = false
				continue
			}
			fl.line++
			if len(line) > fl.opts.Limits.MaxLineSize {
				return ExchangeEvent{}, &LineError{Line: fl.line, Err: fmt.Errorf("%w: %d bytes, limit %d", ErrLineTooLong, len(line), fl.opts.Limits.MaxLineSize)}
			}
			fl.raw = line
			ev, err := fl.dec.event(line)
			if err != nil && !errors.Is(err, ErrUnknownEventType) && !errors.Is(err, ErrUnknownBlockType) {
				return ExchangeEvent{}, &LineError{Line: fl.line, Err: err}
			}
			if ev.Seq != 0 && ev.Seq < fl.from {
				continue
			}
			if ev.Type == RunCompleted {
				fl.done = true
			}
			if err != nil {
				return ev, &LineError{Line: fl.line, Err: err}
			}
			return ev, nil
		}
		if len(fl.buf)-fl.start > fl.opts.Limits.MaxLineSize {
			fl.buf, fl.start = fl.buf[:0], 0
			if !fl.skipping {
				fl.skipping = true
				fl.line++
				return ExchangeEvent{}, &LineError{Line: fl.line, Err: fmt.Errorf("%w: over %d bytes", ErrLineTooLong, fl.opts.Limits.MaxLineSize)}
			}
		}
		n, err := fl.read()
		if err != nil {
			return ExchangeEvent{}, err
		}
		if n > 0 {
			fl.grew = time.Now()
			continue
		}
		if err := fl.checkWriter(); err != nil {
			return ExchangeEvent{}, err
		}
		if err := fl.wait(ctx); err != nil {
			return ExchangeEvent{}, err
		}
	}
}

// Line is the 1-based number of the line Next returned last.
func (fl *Follower) Line() int { return fl.line }

// Raw is the bytes of the line Next returned last, without its newline.
// It is valid until the next call to Next.
func (fl *Follower) Raw() []byte { return fl.raw }

func (fl *Follower) read() (int, error) {
	if fl.start > 0 {
		fl.buf = append(fl.buf[:0], fl.buf[fl.start:]...)
		fl.start = 0
	}
	if cap(fl.buf)-len(fl.buf) < 32<<10 {
		nb := make([]byte, len(fl.buf), 2*cap(fl.buf)+64<<10)
		copy(nb, fl.buf)
		fl.buf = nb
	}
	n, err := fl.f.Read(fl.buf[len(fl.buf):cap(fl.buf)])
	fl.buf = fl.buf[:len(fl.buf)+n]
	if err != nil && err != io.EOF {
		return n, fmt.Errorf("follow transcript %s: %w", fl.path, err)
	}
	return n, nil
}

// checkWriter returns ErrWriterGone when the file has not grown for
// opts.Stale and no recorder holds it. A file that ends in a partial line
// is reported too: with its writer gone, the line will never be finished.
func (fl *Follower) checkWriter() error {
	if fl.opts.wake != nil || time.Since(fl.grew) < fl.opts.Stale {
		return nil
	}
	alive, known := writerAlive(fl.f)
	if !known || alive {
		fl.grew = time.Now() // look again after another Stale
		return nil
	}
	// A writer may have finished between the last read and the check.
	if n, err := fl.read(); err != nil || n > 0 {
		fl.grew = time.Now()
		return err
	}
	msg := "no run.completed, and no process holds it open for writing"
	if pending := len(fl.buf) - fl.start; pending > 0 {
		msg += fmt.Sprintf("; it ends in a torn line of %d bytes", pending)
	}
	return fmt.Errorf("follow transcript %s: %w: %s", fl.path, ErrWriterGone, msg)
}

// wait blocks until the file may have grown.
func (fl *Follower) wait(ctx context.Context) error {
	if r := fl.opts.wake; r != nil {
		r.mu.Lock()
		ch, closed := r.notify, r.closed
		r.notifyWanted = true
		r.mu.Unlock()
		if closed {
			// Nothing more will be written by this recorder; one last read
			// happened just before, so the follower is at the end.
			if n, err := fl.read(); err != nil || n > 0 {
				return err
			}
			return io.EOF
		}
		// A write may have landed between the read and fetching ch; the
		// periodic poll below bounds that window.
		t := time.NewTimer(fl.opts.Poll)
		defer t.Stop()
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	t := time.NewTimer(fl.opts.Poll)
	defer t.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fl.watch != nil {
		events, errs = fl.watch.Events, fl.watch.Errors
	}
	select {
	case <-events:
		// Several writes may have queued a signal each: one read takes
		// them all.
		for {
			select {
			case <-events:
				continue
			default:
			}
			return nil
		}
	case <-errs:
		// A lost signal (the queue overflowed) costs nothing: the read
		// that follows sees whatever was written.
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close releases the file. It is idempotent.
func (fl *Follower) Close() error {
	if fl.f == nil {
		return nil
	}
	if fl.watch != nil {
		fl.watch.Close()
		fl.watch = nil
	}
	err := fl.f.Close()
	fl.f = nil
	return err
}
