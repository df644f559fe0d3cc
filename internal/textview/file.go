package textview

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/promptkind"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
)

// maxToolIDs bounds the call ids remembered from a file's first pass;
// past it, tool blocks in messages are shown even when their pair is.
const maxToolIDs = 1 << 20

// toolIDs reads the file's tool.call and tool.result call ids, the raw
// fields only, so that the rendering pass can leave out the tool blocks of
// messages whose invocation has its own pair.
func (r *renderer) toolIDs(run *runs.Run, tn *Turns) (calls, results map[string]bool, err error) {
	// The rendering pass reads the same lines again: its read reports
	// their damage, this one keeps quiet.
	opts := run.Options()
	opts.Warnings = &warn.List{}
	run = runs.Open(run.Path, opts)
	calls, results = map[string]bool{}, map[string]bool{}
	for rec, err := range run.Events(runs.EnvelopeOnly, transcript.RunStarted, transcript.StepStarted, transcript.StepCompleted,
		transcript.MessageUser, transcript.ToolCall, transcript.ToolResult) {
		if err != nil {
			return nil, nil, err
		}
		env := rec.Envelope()
		if rec.Type != transcript.ToolCall && rec.Type != transcript.ToolResult {
			// only these move the turn count
			kind := promptkind.Prompt
			switch rec.Type {
			case transcript.MessageUser:
				kind = promptkind.MessageJSON(env.Payload)
			case transcript.StepCompleted:
				tn.Compactions(string(env.Path), env.Iteration, CompactionsJSON(env.Payload))
			}
			tn.Event(rec.Type, string(env.Path), env.Iteration, kind)
			continue
		}
		if len(calls)+len(results) >= maxToolIDs {
			continue
		}
		v, ok, _ := rawjson.Field(env.Payload, "call_id")
		id, sok := rawjson.String(v)
		if !ok || !sok {
			continue
		}
		if rec.Type == transcript.ToolCall {
			calls[id] = true
		} else {
			results[id] = true
		}
	}
	return calls, results, nil
}

// A file is rendered in windows of events, so memory stays bounded by
// these whatever it holds: a window ends at a step boundary (TextFirst
// moves events within a step only) or when it holds maxWindow events or
// maxWindowBytes of lines.
const (
	maxWindow      = 4096
	maxWindowBytes = 32 << 20
)

func (r *renderer) file(ctx context.Context, run *runs.Run) error {
	file, depth := run.Path, run.Depth()
	if r.seen[file] {
		// A resumed run calls the same child again: it was shown whole
		// the first time.
		r.line(r.pal.dim, fmt.Sprintf("(sub-workflow %s: shown above)", strings.TrimSuffix(path.Base(file), ".jsonl")))
		return nil
	}
	r.seen[file] = true
	// Tool invocations are shown from their tool.call/tool.result events;
	// the same invocation's blocks inside messages are not repeated. The
	// ids come from a first pass over the file.
	f := &fileRender{r: r, run: run, depth: depth, turns: NewTurns()}
	var err error
	f.calls, f.results, err = r.toolIDs(run, f.turns)
	f.turns.Rewind()
	if err != nil {
		return f.damaged(err)
	}
	r.spent = append(r.spent, pricing.Total{})
	defer func() {
		// what a sub-workflow spent counts in its caller's run
		n := len(r.spent) - 1
		if n > 0 {
			r.spent[n-1].Add(r.spent[n])
		}
		r.spent = r.spent[:n]
	}()
	for rec, err := range run.Events(runs.FullDecode) {
		if err != nil {
			return f.damaged(err)
		}
		if err := f.add(ctx, rec); err != nil {
			return err
		}
	}
	if err := f.render(ctx); err != nil {
		return err
	}
	if !f.completed && r.opts.Step == "" {
		r.line(r.pal.bad, "run interrupted: the transcript ends without run.completed")
	}
	return nil
}

// fileRender is the rendering of one transcript, a window of events at a
// time.
type fileRender struct {
	r              *renderer
	run            *runs.Run
	depth          int
	turns          *Turns
	calls, results map[string]bool // tool call ids with their own events
	window         []transcript.ExchangeEvent
	size           int  // bytes of the window's lines
	completed      bool // the last attempt has its run.completed
}

// damaged ends the file at a read error: the run's own is the caller's
// error, a sub-workflow's a warning.
func (f *fileRender) damaged(err error) error {
	if f.depth == 0 {
		return err
	}
	f.r.warn("%v", err)
	return nil
}

// add puts one record in the window, rendering the window first at a step
// boundary and after it when it is full.
func (f *fileRender) add(ctx context.Context, rec *runs.Record) error {
	ev := *rec.Event()
	f.r.opts.Masker.MaskEvent(&ev)
	boundary := ev.Type == transcript.StepStarted || ev.Type == transcript.StepCompleted ||
		ev.Type == transcript.CallWorkflowStarted
	if boundary && len(f.window) > 0 {
		if err := f.render(ctx); err != nil {
			return err
		}
	}
	f.window = append(f.window, ev)
	f.size += len(rec.Raw)
	if boundary || len(f.window) >= maxWindow || f.size >= maxWindowBytes {
		return f.render(ctx)
	}
	return nil
}

// render shows the window's events and empties it. A conversation reads
// with the text that introduced a tool call before the call (agents record
// the call first, as soon as they see it).
func (f *fileRender) render(ctx context.Context) error {
	for _, ev := range normalize.TextFirst(f.window) {
		if err := f.event(ctx, &ev); err != nil {
			return err
		}
	}
	f.window, f.size = f.window[:0], 0
	return nil
}

// event shows one event, paced, and the sub-workflow a
// step.call_workflow.started starts.
func (f *fileRender) event(ctx context.Context, ev *transcript.ExchangeEvent) error {
	r := f.r
	kind := promptkind.Prompt
	if ev.Type == transcript.MessageUser {
		kind = promptkind.Message(ev.Message())
	}
	turn, of := f.turns.Event(ev.Type, ev.Path, ev.Iteration, kind)
	r.compaction, r.compacted = f.turns.Compaction()
	if ev.Type == transcript.StepCompleted {
		r.spend(ev)
	}
	if !r.keep(ev) {
		return nil
	}
	if err := r.pace(ctx, ev.Timestamp); err != nil {
		return err
	}
	switch ev.Type {
	case transcript.RunStarted:
		f.completed = false
	case transcript.RunCompleted:
		f.completed = true
	}
	if of > 1 {
		r.turn(turn, of)
	}
	r.event(ev, f.depth, f.calls, f.results)
	if ev.Type == transcript.CallWorkflowStarted && ev.ChildRunID != "" {
		child, err := f.run.Child(ev.ChildRunID)
		if err != nil {
			r.warn("%s: %v", f.run.Path, err)
		} else if err := r.file(ctx, child); err != nil {
			return err
		}
	}
	if err := r.w.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// spend adds an agent step's cost to its file's account.
func (r *renderer) spend(ev *transcript.ExchangeEvent) {
	sp := ev.Step()
	if sp == nil || sp.Kind != transcript.KindAgent || sp.Result == nil {
		return
	}
	var ar transcript.AgentResult
	if transcript.DecodeResult(sp.Result, &ar) == nil {
		r.spent[len(r.spent)-1].Add(r.opts.Prices.Step(&ar))
	}
}

// keep applies the --step filter. A child run's events are kept when the
// calling step was.
func (r *renderer) keep(ev *transcript.ExchangeEvent) bool {
	s := r.opts.Step
	if s == "" {
		return true
	}
	if ev.ParentRunID != "" && (ev.Type == transcript.RunStarted || ev.Type == transcript.RunCompleted) {
		return true
	}
	if ev.Path != "" {
		r.paths[ev.Path] = true
	}
	if ev.Path == s || strings.HasPrefix(ev.Path, s+".") {
		r.matched = true
		return true
	}
	ok, _ := path.Match(strings.ReplaceAll(s, ".", "/"), strings.ReplaceAll(ev.Path, ".", "/"))
	r.matched = r.matched || ok
	return ok
}

func (r *renderer) pace(ctx context.Context, ts time.Time) error {
	if r.opts.Speed <= 0 || ts.IsZero() {
		return nil
	}
	if !r.last.IsZero() && ts.After(r.last) {
		gap := min(ts.Sub(r.last), r.opts.MaxGap)
		if err := r.w.Flush(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		t := time.NewTimer(time.Duration(float64(gap) / r.opts.Speed))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	r.last = ts
	return nil
}
