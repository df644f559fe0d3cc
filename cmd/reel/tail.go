package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/textview"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
	"github.com/spf13/cobra"
)

// tailOptions are the flags of `reel tail`.
type tailOptions struct {
	refs           runRefFlags
	follow, asJSON bool
	// lines is -n: how many of the last events to start with.
	lines int
	poll  time.Duration
}

func newTailCmd() *cobra.Command {
	var o tailOptions
	cmd := &cobra.Command{
		Use:   "tail RUN|--latest [-f]",
		Short: "Print a run's latest events; with -f, follow them until run.completed",
		Long: `Print the last -n events of a run, one line each (seq, time, type, path and a
summary), or as JSON lines with --json. With -f, keep printing events as they
are written, until run.completed; the library's follower reads the file
itself, so no event is missed however fast the run writes. A run whose
writer died (killed, or its machine crashed) never writes run.completed:
when the file has stopped growing and no process holds the recorder's lock
on it, -f says so and exits with status 1. A file without a single event
(garbage, or empty) is an error too.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runTail(cmd, args, &o) },
	}
	o.refs.register(cmd)
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing events as they are written, until run.completed (or until the writer is found dead)")
	cmd.Flags().IntVarP(&o.lines, "lines", "n", 10, "start with the last N events (0: all)")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print events as JSON lines")
	cmd.Flags().DurationVar(&o.poll, "poll", 100*time.Millisecond, "how often to look for new events with -f")
	return cmd
}

func runTail(cmd *cobra.Command, args []string, o *tailOptions) error {
	list, err := o.refs.resolve(args, 1)
	if err != nil {
		return err
	}
	run := list[0]
	// A first read finds the last event. Without -f its damage is what the
	// command reports (the lines shown are a part of what it read); with
	// -f the follower reports what it meets, and a torn final line is one
	// a live writer may still finish.
	opts := run.Options()
	var scanned warn.List
	opts.Warnings = &scanned
	events, last, err := runs.Open(run.Path, opts).Count()
	switch {
	case errors.Is(err, transcript.ErrEmpty) && o.follow:
	case err != nil:
		return &exitError{code: 1, msg: err.Error()}
	case events == 0:
		// Not one event: this is not a transcript.
		first := "(none)"
		if w := scanned.Strings(); len(w) > 0 {
			first = w[0]
		}
		return &exitError{code: 1, msg: fmt.Sprintf("%s: no transcript event in the file; the first problem: %s", run.Path, first)}
	}
	warns := &scanned
	if o.follow {
		warns = run.Warnings()
	}
	from := uint64(1)
	if o.lines > 0 && last > uint64(o.lines) {
		from = last - uint64(o.lines) + 1
	}
	if err := o.print(cmd, run, from, last, warns); err != nil {
		return err
	}
	return reportWarnings(cmd, warns.Strings())
}

// print writes the run's events from seq from on: up to last, or with -f
// until run.completed or the writer is found dead.
func (o *tailOptions) print(cmd *cobra.Command, run *runs.Run, from, last uint64, warns *warn.List) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	out := cmd.OutOrStdout()
	opts := run.Options()
	opts.Poll = o.poll
	for rec, err := range runs.Open(run.Path, opts).Follow(ctx, from) {
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, transcript.ErrWriterGone) {
				// The run will never complete: say so, and do not wait
				// forever.
				for _, m := range warns.Strings() {
					fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %s\n", m)
				}
				return &exitError{code: 1, msg: fmt.Sprintf("tail: %v", err)}
			}
			return err
		}
		ev := rec.Event()
		writeTailEvent(out, ev, o.asJSON)
		// Without -f, stop at the end the file had at start.
		if !o.follow && ev.Seq >= last {
			return nil
		}
	}
	return nil
}

func writeTailEvent(w io.Writer, ev *transcript.ExchangeEvent, asJSON bool) {
	if asJSON {
		b, err := json.Marshal(ev)
		if err != nil {
			fmt.Fprintf(w, "{\"seq\":%d,\"error\":%q}\n", ev.Seq, err.Error())
			return
		}
		w.Write(append(b, '\n'))
		return
	}
	p := ev.Path
	if ev.Iteration != 0 {
		p = fmt.Sprintf("%s[%d]", p, ev.Iteration)
	}
	if p == "" {
		p = "-"
	}
	fmt.Fprintf(w, "%6d  %s  %-28s  %-24s  %s\n", ev.Seq, transcript.FormatTime(ev.Timestamp), ev.Type, p, textview.Summary(ev))
}
