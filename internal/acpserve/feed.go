package acpserve

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/reelhq/reel/transcript"
)

// feed projects a run's transcripts, its own and its sub-workflows', to the
// editor as they are written. It follows each file (not the recorder's
// fan-out, which drops events for a slow reader) so that an editor that
// reads slowly misses nothing.
type feed struct {
	out *stream
	log *slog.Logger
	ctx context.Context
	// stop ends the projection at once (the server is going away).
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu      sync.Mutex
	follows []*follow
	changed chan struct{} // closed and replaced on every event projected
	// terminal is the message of the terminal state the run ended in.
	terminal string
}

// follow is one transcript being projected.
type follow struct {
	rec  *transcript.Recorder
	seen uint64 // the last seq projected
	done bool
}

func newFeed(out *stream, log *slog.Logger) *feed {
	ctx, stop := context.WithCancel(context.Background())
	return &feed{out: out, log: log, ctx: ctx, stop: stop, changed: make(chan struct{})}
}

// add starts projecting a transcript: the engine hands over each
// recorder, the run's and its sub-workflows', before its first event.
func (f *feed) add(rec *transcript.Recorder, parentRunID string) {
	fw := &follow{rec: rec}
	f.mu.Lock()
	f.follows = append(f.follows, fw)
	f.mu.Unlock()
	f.wg.Add(1)
	go f.project(fw, parentRunID == "")
}

func (f *feed) project(fw *follow, top bool) {
	defer f.wg.Done()
	defer f.mark(fw, 0, true)
	fl, err := fw.rec.Follow(f.ctx, 1)
	if err != nil {
		f.log.Error("follow transcript", "path", fw.rec.Path(), "err", err)
		return
	}
	defer fl.Close()
	p := newProjector(f.out)
	for {
		ev, err := fl.Next(f.ctx)
		if err != nil {
			var le *transcript.LineError
			if errors.As(err, &le) {
				f.log.Warn("unreadable transcript line", "path", fw.rec.Path(), "err", err)
				continue
			}
			if !errors.Is(err, io.EOF) && f.ctx.Err() == nil {
				f.log.Error("follow transcript", "path", fw.rec.Path(), "err", err)
			}
			return
		}
		if err := p.project(f.ctx, &ev); err != nil && f.ctx.Err() == nil {
			f.log.Warn("session update not sent", "err", err)
		}
		if top && ev.Type == transcript.StepCompleted && ev.Path != "" {
			if sp := ev.Step(); sp != nil && sp.Kind == transcript.KindTerminal {
				var r struct {
					Message string `json:"message"`
				}
				if transcript.DecodeResult(sp.Result, &r) == nil {
					f.mu.Lock()
					f.terminal = r.Message
					f.mu.Unlock()
				}
			}
		}
		f.mark(fw, ev.Seq, false)
	}
}

// mark records progress and wakes whoever waits for it.
func (f *feed) mark(fw *follow, seq uint64, done bool) {
	f.mu.Lock()
	if seq > fw.seen {
		fw.seen = seq
	}
	fw.done = fw.done || done
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// flush waits until every event written so far has been sent to the
// editor: before a turn ends, before a permission request.
func (f *feed) flush(ctx context.Context) error {
	f.mu.Lock()
	type target struct {
		fw  *follow
		seq uint64
	}
	var targets []target
	for _, fw := range f.follows {
		targets = append(targets, target{fw, fw.rec.LastSeq()})
	}
	f.mu.Unlock()
	for _, t := range targets {
		for {
			f.mu.Lock()
			ok := t.fw.done || t.fw.seen >= t.seq
			ch := f.changed
			f.mu.Unlock()
			if ok {
				break
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// wait waits until every transcript was projected to its end (after the
// run ended), or ctx ends.
func (f *feed) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// terminalMessage is the message of the terminal state the run ended in.
func (f *feed) terminalMessage() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.terminal
}
