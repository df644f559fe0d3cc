package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/safefile"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
	"github.com/spf13/cobra"
)

// defaultReplayGap caps the pause between two events in a paced replay.
const defaultReplayGap = 2 * time.Second

func newTailCmd() *cobra.Command {
	var (
		refs   runRefFlags
		follow bool
		lines  int
		asJSON bool
		poll   time.Duration
	)
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
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := refs.resolve(args, 1)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			sc, err := scanTail(paths[0])
			if err != nil {
				return err
			}
			var warns warn.List
			if sc.torn != nil && !follow {
				// A live writer may still complete the line; -f waits
				// for it, a one-shot tail reports it.
				warns.Addf("%s: %v", paths[0], sc.torn)
			}
			last := sc.last
			from := uint64(1)
			if lines > 0 && last > uint64(lines) {
				from = last - uint64(lines) + 1
			}
			switch {
			case sc.lines > 0 && last == 0:
				// Not one event: this is not a transcript.
				return &exitError{code: 1, msg: fmt.Sprintf("%s: no transcript event in %d line(s); the first: %v", paths[0], sc.lines, sc.firstErr)}
			case !follow && sc.lines == 0:
				return &exitError{code: 1, msg: fmt.Sprintf("%s: %v", paths[0], transcript.ErrEmpty)}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			fl, err := transcript.Follow(ctx, paths[0], from, transcript.FollowOptions{Poll: poll})
			if err != nil {
				return err
			}
			defer fl.Close()
			sawBad := false
			for {
				ev, err := fl.Next(ctx)
				if err == io.EOF {
					break
				}
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					if errors.Is(err, transcript.ErrWriterGone) {
						// The run will never complete: say so, and do
						// not wait forever.
						for _, m := range warns.Strings() {
							fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: %s\n", m)
						}
						return &exitError{code: 1, msg: fmt.Sprintf("tail: %v", err)}
					}
					var le *transcript.LineError
					if errors.As(err, &le) {
						sawBad = true
						warns.Addf("%s: %v", paths[0], err)
						if errors.Is(err, transcript.ErrUnknownEventType) || errors.Is(err, transcript.ErrUnknownBlockType) {
							writeTailEvent(out, &ev, asJSON)
						}
						continue
					}
					return err
				}
				writeTailEvent(out, &ev, asJSON)
				// Without -f, stop at the end the file had at start.
				if !follow && ev.Seq >= last {
					break
				}
			}
			if sc.bad > 0 && !sawBad && !follow {
				// The damage lies outside the lines shown: still say so.
				warns.Addf("%s: %d line(s) that are not transcript events; the first: %v", paths[0], sc.bad, sc.firstErr)
			}
			return reportWarnings(cmd, warns.Strings())
		},
	}
	refs.register(cmd)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing events as they are written, until run.completed (or until the writer is found dead)")
	cmd.Flags().IntVarP(&lines, "lines", "n", 10, "start with the last N events (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print events as JSON lines")
	cmd.Flags().DurationVar(&poll, "poll", 100*time.Millisecond, "how often to look for new events with -f")
	return cmd
}

// tailScan is what a first pass over a transcript found.
type tailScan struct {
	last     uint64 // seq of the last complete event line
	lines    int    // lines read
	torn     error  // a final line without its newline
	firstErr error  // the first line that is not an event
	bad      int    // lines that are not events
}

// scanTail finds the seq of the last complete line in the transcript and
// whether the file holds any event at all.
func scanTail(path string) (tailScan, error) {
	var sc tailScan
	f, err := safefile.Open(path)
	if err != nil {
		return sc, fmt.Errorf("open transcript %s: %w", path, err)
	}
	defer f.Close()
	rd := transcript.NewReader(f)
	for {
		line, err := rd.NextLine()
		if err == io.EOF {
			sc.lines = rd.Line()
			return sc, nil
		}
		if err != nil {
			var le *transcript.LineError
			if errors.Is(err, transcript.ErrTornLine) {
				sc.torn = err
				continue
			}
			if errors.As(err, &le) && !errors.Is(err, transcript.ErrFileTooLarge) {
				if sc.firstErr == nil {
					sc.firstErr = err
				}
				sc.bad++
				continue
			}
			return sc, err
		}
		v, ok, _ := rawjson.Field(line, "seq")
		n, perr := strconv.ParseUint(string(v), 10, 64)
		if !ok || perr != nil {
			if sc.firstErr == nil {
				sc.firstErr = fmt.Errorf("line %d: not a transcript event", rd.Line())
			}
			sc.bad++
			continue
		}
		if n > sc.last {
			sc.last = n
		}
	}
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
	fmt.Fprintf(w, "%6d  %s  %-28s  %-24s  %s\n", ev.Seq, transcript.FormatTime(ev.Timestamp), ev.Type, p, tailSummary(ev))
}

func tailSummary(ev *transcript.ExchangeEvent) string {
	var s string
	switch {
	case ev.Step() != nil:
		sp := ev.Step()
		s = sp.Name + " (" + sp.Kind + ")"
		if sp.Attempt > 1 {
			s += fmt.Sprintf(" attempt %d", sp.Attempt)
		}
		if sp.Command != "" {
			s += " $ " + sp.Command
		}
		if ev.ChildRunID != "" {
			s += " child " + ev.ChildRunID
		}
		if sp.Error != "" {
			s += " error: " + sp.Error
		}
	case ev.Message() != nil:
		for _, b := range ev.Message().Blocks {
			switch b.Type {
			case transcript.BlockText:
				s += b.Text + " "
			case transcript.BlockThinking:
				s += "[thinking] "
			case transcript.BlockToolUse:
				s += "[tool_use " + b.ToolName + "] "
			case transcript.BlockCommand:
				s += "$ " + b.Command + " "
			default:
				s += "[" + string(b.Type) + "] "
			}
		}
	case ev.Tool() != nil:
		tp := ev.Tool()
		s = tp.Name + " " + tp.CallID + " " + string(tp.Fidelity)
		if tp.Error != "" {
			s += " error: " + tp.Error
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 100 {
		s = string(r[:99]) + "…"
	}
	return s
}
