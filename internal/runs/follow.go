package runs

import (
	"context"
	"errors"
	"io"
	"iter"

	"github.com/reelhq/reel/transcript"
)

// Follow reads the run's transcript from seq from on (0 and 1 both mean
// from the start) and then keeps reading it as it grows, so a live view
// never misses an event whatever the writer's fan-out dropped; it ends
// after run.completed. Records are decoded whole (FullDecode) and numbered
// by line, without offsets.
//
// Damaged lines are left out and reported in Run.Warnings, as by Events;
// a torn final line is waited for, since its writer may still finish it.
// The error ends the sequence: the file cannot be opened or read, ctx
// ended, or the writer died before run.completed
// (transcript.ErrWriterGone).
func (r *Run) Follow(ctx context.Context, from uint64) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		fl, err := transcript.Follow(ctx, r.Path, from, transcript.FollowOptions{Limits: r.opts.Limits, Poll: r.opts.Poll, Stale: r.opts.Stale})
		if err != nil {
			yield(nil, err)
			return
		}
		defer fl.Close()
		rd := &reading{run: r}
		for {
			ev, err := fl.Next(ctx)
			damaged := err != nil
			if err == io.EOF {
				return
			}
			if err != nil {
				var le *transcript.LineError
				if !errors.As(err, &le) {
					yield(nil, err)
					return
				}
				rd.damage(0, err)
				if !errors.Is(err, transcript.ErrUnknownEventType) && !errors.Is(err, transcript.ErrUnknownBlockType) {
					continue
				}
			}
			rd.rec = Record{Line: fl.Line(), Type: ev.Type, Raw: fl.Raw(), rd: rd, ev: ev, evState: good, damaged: damaged}
			if !yield(&rd.rec, nil) {
				return
			}
		}
	}
}
