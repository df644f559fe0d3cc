package webview

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/textview"
	"github.com/reelhq/reel/transcript"
)

// RunOptions tune LoadRun.
type RunOptions struct {
	// Redact, when set, is applied to every event and every string taken
	// from the transcript before anything is rendered.
	Redact *Redactor
}

// Run is a run page's content: the summary, the execution tree, the
// timeline and the conversation, sub-workflows inline.
type Run struct {
	ID          string
	ParentRunID string
	Workflow    string
	Status      string
	Error       string
	ExitCode    *int
	Started     time.Time
	Duration    time.Duration
	Usage       transcript.Usage
	CostUSD     float64
	Models      []string
	// Ended is set when the run's last span has its run.completed; a
	// page of a run that has not ended follows it live.
	Ended    bool
	LastSeq  uint64
	Tree     []TreeRow
	Timeline []TimelineRow
	Events   []Event
	// Warnings are what could not be read, repeated ones summarised;
	// WarningCount counts them all, shown or not.
	Warnings     []string
	WarningCount int
}

// TreeRow is one execution in the tree, flattened with its depth.
type TreeRow struct {
	Depth      int
	Name       string
	Kind       string
	Path       string
	Iteration  int
	Attempt    int
	Status     string
	Error      string
	Duration   time.Duration
	Usage      transcript.Usage
	CostUSD    float64
	Model      string
	ExitCode   *int
	Tools      int
	RunID      string
	ChildRunID string
	// Anchor is the id of the step.started event in the conversation.
	Anchor string
	// T is when the execution started, in ms from the run's start.
	T int64
}

// TimelineRow is one bar of the timeline: a step execution or a tool call.
type TimelineRow struct {
	Depth    int
	Label    string
	Tool     bool
	Status   string
	Left     float64 // percent of the run's span
	Width    float64
	Duration time.Duration
	Anchor   string
	T        int64
}

// Event is one transcript event as the conversation shows it.
type Event struct {
	Anchor string
	Seq    uint64
	Type   string
	// Class is the CSS class of the event's kind.
	Class string
	Path  string
	Iter  int
	Time  time.Time
	// T is the event's time in ms from the run's start (playback).
	T      int64
	Title  string
	Meta   []string
	Blocks []Block
	Error  string
	Child  *Child
}

// Child is a sub-workflow's conversation, shown inline.
type Child struct {
	RunID    string
	Workflow string
	Events   []Event
	Missing  string
}

// LoadRun reads the run's transcript, and those of the sub-workflows it
// called, into a run page. Each transcript is read once: the execution
// tree and the conversation are built from the same read.
func LoadRun(run *runs.Run, opts RunOptions) (*Run, error) {
	l := &loader{opts: opts, anchors: map[string]string{}, read: map[string][]transcript.ExchangeEvent{}}
	tree, err := exectree.Build(run, exectree.Options{Each: l.collect})
	if err != nil {
		return nil, err
	}
	root := tree.Root
	r := &Run{
		ID: root.RunID, Workflow: root.Name, Error: root.Error, ExitCode: root.ExitCode, Started: root.Start,
		Duration: time.Duration(root.Duration), Usage: root.Usage, CostUSD: root.CostUSD,
	}
	l.start, l.unread = root.Start, tree.Unread
	events, meta := l.file(run, "")
	r.Events, r.ParentRunID, r.Ended, r.LastSeq = events, meta.parent, meta.ended, meta.lastSeq
	if r.ID == "" {
		r.ID = meta.runID
	}
	r.Status = run.Status()
	r.Warnings, r.WarningCount = tree.Warnings, run.Warnings().Len()
	r.Tree, r.Timeline = l.tree(root)
	seen := map[string]bool{}
	for _, row := range r.Tree {
		if row.Model != "" && !seen[row.Model] {
			seen[row.Model] = true
			r.Models = append(r.Models, row.Model)
		}
	}
	if o := opts.Redact; o != nil {
		r.Workflow, r.Error = o.String(r.Workflow), o.String(r.Error)
		for i := range r.Tree {
			r.Tree[i].Name, r.Tree[i].Error = o.String(r.Tree[i].Name), o.String(r.Tree[i].Error)
		}
		for i := range r.Timeline {
			r.Timeline[i].Label = o.String(r.Timeline[i].Label)
		}
		for i := range r.Warnings {
			r.Warnings[i] = o.String(r.Warnings[i])
		}
	}
	return r, nil
}

type fileMeta struct {
	runID, parent string
	ended         bool
	lastSeq       uint64
}

// loader turns events into their page form.
type loader struct {
	opts  RunOptions
	start time.Time
	// read holds the events of every transcript the tree read, by path,
	// redacted; unread says why a child's was not, by run id.
	read   map[string][]transcript.ExchangeEvent
	unread map[string]string
	// anchors maps an execution (run, path, iteration, attempt, start) to
	// its step.started event's anchor, for the tree's links.
	anchors map[string]string
	// tools holds each tool call's span by run and path, for the timeline.
	tools map[string][]toolSpan
}

type toolSpan struct {
	name       string
	start, end time.Time
	err        bool
	anchor     string
	iteration  int
}

func execKey(run, path string, iteration, attempt int, start time.Time) string {
	return fmt.Sprintf("%s|%s|%d|%d|%d", run, path, iteration, attempt, start.UnixMicro())
}

func (l *loader) ms(t time.Time) int64 {
	if t.IsZero() || l.start.IsZero() {
		return 0
	}
	return max(0, t.Sub(l.start).Milliseconds())
}

// collect keeps, as the tree reads them, the events of every transcript.
func (l *loader) collect(run *runs.Run, rec *runs.Record) {
	ev := rec.Event()
	if ev == nil {
		return
	}
	e := *ev
	if l.opts.Redact != nil {
		l.opts.Redact.Event(&e)
	}
	l.read[run.Path] = append(l.read[run.Path], e)
}

// file renders the events of one transcript; prefix keeps the anchors of
// an inline child run apart from its parent's.
func (l *loader) file(run *runs.Run, prefix string) ([]Event, fileMeta) {
	var meta fileMeta
	evs := l.read[run.Path]
	if l.tools == nil {
		l.tools = map[string][]toolSpan{}
	}
	// Tool invocations with their own tool.call/tool.result events are
	// shown there; the agent's tool_use and tool_result blocks that repeat
	// them are left out of its messages.
	pairs := map[string]bool{}
	calls := map[string]int{}
	for _, ev := range evs {
		if tp := ev.Tool(); tp != nil {
			pairs[tp.CallID] = true
		}
	}
	paired := func(id string) bool { return pairs[id] }
	// a conversation step's user messages are numbered as reel tree and
	// reel replay number them
	tn := textview.NewTurns()
	for i := range evs {
		tn.Event(evs[i].Type, evs[i].Path, evs[i].Iteration)
	}
	tn.Rewind()
	out := make([]Event, 0, len(evs))
	for i := range evs {
		ev := &evs[i]
		turn, of := tn.Event(ev.Type, ev.Path, ev.Iteration)
		if meta.runID == "" {
			meta.runID, meta.parent = ev.RunID, ev.ParentRunID
		}
		meta.lastSeq = max(meta.lastSeq, ev.Seq)
		switch ev.Type {
		case transcript.RunStarted:
			meta.ended = false
		case transcript.RunCompleted:
			meta.ended = true
		}
		e := l.event(ev, prefix, paired)
		if of > 1 {
			e.Title += fmt.Sprintf(" · turn %d/%d", turn, of)
		}
		switch ev.Type {
		case transcript.ToolCall:
			tp := ev.Tool()
			key := ev.RunID + "|" + ev.Path
			calls[tp.CallID] = len(l.tools[key])
			l.tools[key] = append(l.tools[key], toolSpan{name: tp.Name, start: ev.Timestamp, end: ev.Timestamp, anchor: e.Anchor, iteration: ev.Iteration})
		case transcript.ToolResult:
			tp := ev.Tool()
			key := ev.RunID + "|" + ev.Path
			if k, ok := calls[tp.CallID]; ok && k < len(l.tools[key]) {
				s := &l.tools[key][k]
				s.end, s.err = ev.Timestamp, tp.Error != ""
				e.Meta = append(e.Meta, fmtDuration(ev.Timestamp.Sub(s.start)))
			}
		case transcript.StepStarted:
			if sp := ev.Step(); sp != nil {
				l.anchors[execKey(ev.RunID, ev.Path, ev.Iteration, sp.Attempt, ev.Timestamp)] = e.Anchor
			}
		case transcript.CallWorkflowStarted:
			e.Child = l.child(run, ev.ChildRunID)
		}
		out = append(out, e)
	}
	return out, meta
}

// child is a sub-workflow's conversation, from the events the tree read.
func (l *loader) child(parent *runs.Run, id string) *Child {
	c := &Child{RunID: id}
	cr, err := parent.Child(id)
	if err != nil {
		c.Missing = err.Error()
		return c
	}
	if _, ok := l.read[cr.Path]; !ok {
		c.Missing = l.unread[id]
		if c.Missing == "" {
			c.Missing = fmt.Sprintf("child run %s was not read", id)
		}
		return c
	}
	c.Events, _ = l.file(cr, "r"+id[:8]+"-")
	for _, ev := range l.read[cr.Path] {
		if sp := ev.Step(); ev.Type == transcript.RunStarted && sp != nil {
			c.Workflow = sp.Name
			break
		}
	}
	return c
}

func (l *loader) event(ev *transcript.ExchangeEvent, prefix string, paired func(id string) bool) Event {
	e := Event{
		Anchor: fmt.Sprintf("%se%d", prefix, ev.Seq), Seq: ev.Seq, Type: string(ev.Type),
		Class: strings.ReplaceAll(string(ev.Type), ".", "-"), Path: ev.Path, Iter: ev.Iteration,
		Time: ev.Timestamp, T: l.ms(ev.Timestamp),
	}
	switch p := ev.Payload.(type) {
	case *transcript.StepPayload:
		l.step(&e, ev, p)
	case *transcript.MessagePayload:
		l.message(&e, p, paired)
	case *transcript.ToolPayload:
		if ev.Type == transcript.ToolCall {
			e.Title = "tool call: " + p.Name
			e.Blocks = append(e.Blocks, fold("input", toolInput(p.Name, raw(p.Input)), true))
		} else {
			e.Title = "tool result: " + p.Name
			if p.Output != nil && string(raw(p.Output)) != `""` {
				e.Blocks = append(e.Blocks, fold("output", value(raw(p.Output), 0), false))
			}
			e.Error = p.Error
		}
		if p.Fidelity != "" {
			e.Meta = append(e.Meta, string(p.Fidelity))
		}
	default:
		e.Title = string(ev.Type)
		if r, ok := ev.Payload.(json.RawMessage); ok {
			e.Blocks = append(e.Blocks, value(r, 0))
		}
	}
	return e
}

func raw(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

func fold(label string, b Block, open bool) Block {
	if b.Kind == "note" {
		b.Label = label
		return b
	}
	return Block{Kind: "fold", Label: label, Fold: true, Open: open, Parts: []Block{b}}
}

func (l *loader) step(e *Event, ev *transcript.ExchangeEvent, sp *transcript.StepPayload) {
	label := ev.Path
	if label == "" {
		label = sp.Name
	}
	if ev.Iteration > 0 {
		label += fmt.Sprintf(" [%d]", ev.Iteration)
	}
	if sp.Attempt > 1 {
		label += fmt.Sprintf(" (attempt %d)", sp.Attempt)
	}
	e.Error = sp.Error
	switch ev.Type {
	case transcript.RunStarted:
		e.Title = "run started: " + sp.Name
		if sp.Attempt > 1 {
			e.Meta = append(e.Meta, fmt.Sprintf("attempt %d (resumed)", sp.Attempt))
		}
	case transcript.RunCompleted:
		st, rr := runstatus.Completed(sp)
		e.Title = "run " + st
		e.Meta = append(e.Meta, fmtDuration(time.Duration(rr.DurationMS)*time.Millisecond), fmtTokens(rr.Usage))
		if rr.CostUSD != nil {
			e.Meta = append(e.Meta, fmtCost(*rr.CostUSD))
		}
		if st != runstatus.Success {
			e.Class += " bad"
		}
	case transcript.StepStarted:
		e.Title = "▶ " + label + " · " + sp.Kind
		if sp.Command != "" {
			e.Blocks = append(e.Blocks, Block{Kind: "command", Text: sp.Command})
		}
	case transcript.StepCompleted:
		mark := "✓ "
		if sp.Error != "" {
			mark = "✗ "
		}
		e.Title = mark + label + " · " + sp.Kind
		switch sp.Kind {
		case transcript.KindCommand:
			var cr transcript.CommandResult
			if sp.Result != nil && transcript.DecodeResult(sp.Result, &cr) == nil {
				e.Meta = append(e.Meta, fmt.Sprintf("exit %d", cr.ExitCode))
				if cr.DurationMS > 0 {
					e.Meta = append(e.Meta, fmtDuration(time.Duration(cr.DurationMS)*time.Millisecond))
				}
				if cr.Output != "" {
					e.Blocks = append(e.Blocks, fold("output", textBlock(cr.Output), true))
				}
				if cr.Stderr != "" {
					e.Blocks = append(e.Blocks, fold("stderr", Block{Kind: "pre", Text: cr.Stderr}, cr.ExitCode != 0))
				}
				if cr.Truncated {
					e.Meta = append(e.Meta, "output truncated")
				}
			}
		case transcript.KindAgent:
			var ar transcript.AgentResult
			if sp.Result != nil && transcript.DecodeResult(sp.Result, &ar) == nil {
				if ar.DurationMS > 0 {
					e.Meta = append(e.Meta, fmtDuration(time.Duration(ar.DurationMS)*time.Millisecond))
				}
				e.Meta = append(e.Meta, fmtTokens(ar.Usage))
				if ar.CostUSD != nil {
					e.Meta = append(e.Meta, fmtCost(*ar.CostUSD))
				}
				for _, s := range []string{ar.Provider, ar.Model} {
					if s != "" {
						e.Meta = append(e.Meta, s)
					}
				}
			}
		}
		if sp.Error != "" {
			e.Class += " bad"
		}
	case transcript.CallWorkflowStarted:
		e.Title = "→ sub-workflow " + label
	case transcript.CallWorkflowCompleted:
		e.Title = "← sub-workflow " + label
	}
}

func (l *loader) message(e *Event, mp *transcript.MessagePayload, paired func(id string) bool) {
	if mp.Role == "user" {
		e.Title = "user"
	} else {
		e.Title = "assistant"
	}
	for i, b := range mp.Blocks {
		switch b.Type {
		case transcript.BlockText:
			if mp.Role == "user" && i == 1 && b.Fidelity == transcript.FidelityRouter {
				e.Blocks = append(e.Blocks, fold("system prompt", textBlock(b.Text), false))
				continue
			}
			tb := textBlock(b.Text)
			if tb.Kind == "pre" {
				tb.Kind = "text"
			}
			e.Blocks = append(e.Blocks, tb)
		case transcript.BlockThinking:
			e.Blocks = append(e.Blocks, Block{Kind: "fold", Label: "thinking", Fold: true, Parts: []Block{{Kind: "thinking", Text: b.Thinking}}})
		case transcript.BlockToolUse:
			if paired(b.ToolID) {
				e.Blocks = append(e.Blocks, Block{Kind: "note", Text: "calls " + b.ToolName})
				continue
			}
			e.Blocks = append(e.Blocks, fold("tool use: "+b.ToolName, toolInput(b.ToolName, raw(b.ToolInput)), true))
		case transcript.BlockToolResult:
			if paired(b.ToolID) {
				continue
			}
			e.Blocks = append(e.Blocks, fold("tool result", value(raw(b.ToolContent), 0), false))
		case transcript.BlockCommand:
			e.Blocks = append(e.Blocks, Block{Kind: "command", Text: b.Command})
		case transcript.BlockStream:
			e.Blocks = append(e.Blocks, Block{Kind: "pre", Text: b.Chunk})
		default:
			e.Blocks = append(e.Blocks, fold("block "+string(b.Type), value(b.Raw, 0), false))
		}
	}
}

// tree flattens the execution tree and lays out the timeline.
func (l *loader) tree(root *exectree.Node) ([]TreeRow, []TimelineRow) {
	var rows []TreeRow
	var bars []TimelineRow
	start := root.Start
	end := root.End
	exectree.Walk(root, func(n *exectree.Node, _ int) {
		if n.End.After(end) {
			end = n.End
		}
	})
	span := end.Sub(start)
	pct := func(t time.Time) float64 {
		if span <= 0 || t.IsZero() {
			return 0
		}
		return min(100, max(0, 100*float64(t.Sub(start))/float64(span)))
	}
	var walk func(n *exectree.Node, depth int, run string)
	walk = func(n *exectree.Node, depth int, run string) {
		if n.Kind == transcript.KindWorkflow && n.RunID != "" {
			run = n.RunID
		}
		row := TreeRow{
			Depth: depth, Name: n.Name, Kind: n.Kind, Path: n.Path, Iteration: n.Iteration, Attempt: n.Attempt,
			Status: n.Status, Error: n.Error, Duration: time.Duration(n.Duration), Usage: n.Usage, CostUSD: n.CostUSD,
			Model: n.Model, ExitCode: n.ExitCode, Tools: n.Tools, ChildRunID: n.ChildRunID, T: l.ms(n.Start),
		}
		if n.Kind == transcript.KindWorkflow {
			row.RunID = n.RunID
		} else if n.Kind != exectree.KindIteration {
			row.Anchor = l.anchors[execKey(run, n.Path, n.Iteration, n.Attempt, n.Start)]
		}
		rows = append(rows, row)
		if depth > 0 {
			label := n.Name
			if n.Kind == exectree.KindIteration {
				label = n.Path + " " + n.Name
			} else if n.Path != "" {
				label = n.Path
			}
			e := n.End
			if e.IsZero() {
				e = end
			}
			bars = append(bars, TimelineRow{Depth: depth, Label: label, Status: n.Status, Left: pct(n.Start),
				Width: max(0.4, pct(e)-pct(n.Start)), Duration: time.Duration(n.Duration), Anchor: row.Anchor, T: row.T})
			if n.Kind == transcript.KindAgent {
				for _, s := range l.tools[run+"|"+n.Path] {
					if s.iteration != n.Iteration || s.start.Before(n.Start) || !n.End.IsZero() && s.start.After(n.End) {
						continue
					}
					st := exectree.StatusSuccess
					if s.err {
						st = exectree.StatusFailure
					}
					bars = append(bars, TimelineRow{Depth: depth + 1, Label: s.name, Tool: true, Status: st, Left: pct(s.start),
						Width: max(0.4, pct(s.end)-pct(s.start)), Duration: s.end.Sub(s.start), Anchor: s.anchor, T: l.ms(s.start)})
				}
			}
		}
		for _, c := range n.Children {
			walk(c, depth+1, run)
		}
	}
	walk(root, 0, root.RunID)
	return rows, bars
}

func fmtDuration(d time.Duration) string { return exectree.FormatDuration(d) }

func fmtTokens(u transcript.Usage) string {
	s := fmt.Sprintf("%s in / %s out", count(u.InputTokens), count(u.OutputTokens))
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		s += fmt.Sprintf(" / cache %s read %s write", count(u.CacheReadTokens), count(u.CacheWriteTokens))
	}
	if u.ReasoningTokens > 0 {
		s += fmt.Sprintf(" / %s reasoning", count(u.ReasoningTokens))
	}
	return s
}

func fmtCost(c float64) string {
	if c < 0.01 {
		return fmt.Sprintf("$%.4f", c)
	}
	return fmt.Sprintf("$%.2f", c)
}

func count(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
