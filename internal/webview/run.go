package webview

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/promptkind"
	"github.com/reelhq/reel/internal/rawjson"
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
	// Prices price the agent steps whose provider reported no cost
	// (nil: pricing.Default()), as every reader does.
	Prices *pricing.Table
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
	// Untimed: the run is an imported recording that gave its events no
	// time (exectree.Node.Untimed); its start and duration show "—".
	Untimed bool
	Usage   transcript.Usage
	CostUSD pricing.Total
	Models  []string
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
	// AgentTools counts the tool calls the agents reported themselves
	// (fidelity agent_emitted), said once above the conversation.
	AgentTools int
}

// TreeRow is one execution in the tree, flattened with its depth.
type TreeRow struct {
	Depth     int
	Name      string
	Kind      string
	Path      string
	Iteration int
	Attempt   int
	Status    string
	Error     string
	Duration  time.Duration
	// Untimed: the execution's duration is unknown (exectree.Node.Untimed).
	Untimed bool
	Usage   transcript.Usage
	// CostUSD is nil for an execution with no cost to show.
	CostUSD    *pricing.Total
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
	// CallID ties a tool call's card and its result; Result is the
	// result, shown inside the call's card.
	CallID string
	Result *Event
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
	tree, err := exectree.Build(run, exectree.Options{Each: l.collect, Prices: opts.Prices})
	if err != nil {
		return nil, err
	}
	root := tree.Root
	r := &Run{
		ID: root.RunID, Workflow: root.Name, Error: root.Error, ExitCode: root.ExitCode, Started: root.Start,
		Duration: time.Duration(root.Duration), Untimed: root.Untimed, Usage: root.Usage, CostUSD: root.Cost(),
	}
	l.start, l.unread = root.Start, tree.Unread
	events, meta := l.file(run, "")
	r.Events, r.ParentRunID, r.Ended, r.LastSeq = events, meta.parent, meta.ended, meta.lastSeq
	if r.ID == "" {
		r.ID = meta.runID
	}
	r.Status = run.Status()
	r.AgentTools = l.agentTools
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
	// agentTools counts the agent_emitted tool calls
	agentTools int
	// compacted heads the compaction summary being loaded, with the
	// figures its step's result records.
	compacted string
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
	kind := func(ev *transcript.ExchangeEvent) promptkind.Kind {
		if ev.Type != transcript.MessageUser {
			return promptkind.Prompt
		}
		return promptkind.Message(ev.Message())
	}
	for i := range evs {
		tn.Compactions(evs[i].Path, evs[i].Iteration, textview.StepCompactions(&evs[i]))
		tn.Event(evs[i].Type, evs[i].Path, evs[i].Iteration, kind(&evs[i]))
	}
	tn.Rewind()
	out := make([]Event, 0, len(evs))
	// cards holds the index in out of each tool call's card, by call id
	cards := map[string]int{}
	for i := range evs {
		ev := &evs[i]
		turn, of := tn.Event(ev.Type, ev.Path, ev.Iteration, kind(ev))
		l.compacted = textview.Compacted(tn.Compaction())
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
		if of > 1 && !strings.Contains(e.Class, "noise") {
			e.Title += fmt.Sprintf(" · turn %d/%d", turn, of)
		}
		switch ev.Type {
		case transcript.ToolCall:
			tp := ev.Tool()
			key := ev.RunID + "|" + ev.Path
			calls[tp.CallID] = len(l.tools[key])
			l.tools[key] = append(l.tools[key], toolSpan{name: tp.Name, start: ev.Timestamp, end: ev.Timestamp, anchor: e.Anchor, iteration: ev.Iteration})
			if tp.Fidelity == transcript.FidelityAgentEmitted {
				l.agentTools++
			}
			cards[tp.CallID] = len(out)
		case transcript.ToolResult:
			tp := ev.Tool()
			key := ev.RunID + "|" + ev.Path
			if k, ok := calls[tp.CallID]; ok && k < len(l.tools[key]) {
				s := &l.tools[key][k]
				s.end, s.err = ev.Timestamp, tp.Error != ""
				e.Meta = append(e.Meta, fmtDuration(ev.Timestamp.Sub(s.start)))
			}
			// one card per invocation: the result goes inside its call's
			if k, ok := cards[tp.CallID]; ok && out[k].Result == nil {
				delete(cards, tp.CallID)
				out[k].Result = &e
				if e.Error != "" {
					out[k].Class += " bad"
				}
				continue
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
		e.CallID = p.CallID
		if ev.Type == transcript.ToolCall {
			e.Title = "tool call: " + p.Name
			e.Blocks = append(e.Blocks, fold("input", toolInput(p.Name, raw(p.Input)), true))
		} else {
			e.Title = "result: " + p.Name
			out := raw(p.Output)
			// Claude Code records a failed tool's output as its error
			// too: the same text is shown once, as the error.
			if s, ok := rawjson.String(out); ok && p.Error != "" && strings.TrimSpace(s) == strings.TrimSpace(p.Error) {
				out = nil
			}
			if out != nil && string(out) != `""` && string(out) != "null" {
				b := value(out, 0)
				if proseTool(p.Name) {
					b = asMarkdown(b)
				}
				e.Blocks = append(e.Blocks, fold("output", b, false))
			}
			e.Error = p.Error
		}
		// what the agent reported itself is said once, above the
		// conversation; a call reel ran is marked
		if p.Fidelity == transcript.FidelityRouter {
			e.Meta = append(e.Meta, "run by reel")
		} else if p.Fidelity != "" && p.Fidelity != transcript.FidelityAgentEmitted {
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
		// The run's cost is the summary's (pricing.RunTotal): the
		// reported part recorded here would contradict it.
		e.Meta = append(e.Meta, fmtDuration(time.Duration(rr.DurationMS)*time.Millisecond), fmtTokens(rr.Usage))
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
				prices := l.opts.Prices
				if prices == nil {
					prices = pricing.Default()
				}
				if c := prices.Step(&ar); c.Known || c.Unpriced > 0 {
					e.Meta = append(e.Meta, c.String())
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
				e.Blocks = append(e.Blocks, Block{Kind: "fold", Label: "system prompt", Fold: true, Parts: []Block{{Kind: "text", Text: b.Text}}})
				continue
			}
			text := b.Text
			if mp.Role == "user" && b.Fidelity != transcript.FidelityRouter {
				var shown bool
				if text, shown = noise(e, text, l.compacted); shown {
					continue
				}
			}
			tb := textBlock(text)
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

// noise shows what an agent CLI wrote as a user turn without the user
// typing it (a slash command, its output, context for the model, a
// compaction summary, headed compacted) as what it is, and reports whether
// it did; when it did not, it returns the text to show as the user's (a
// request behind an IDE preamble, the preamble folded before it).
func noise(e *Event, text, compacted string) (string, bool) {
	t := promptkind.Classify(text)
	switch t.Kind {
	case promptkind.SlashCommand:
		e.Title, e.Class = "command "+t.Command, e.Class+" noise"
		if t.Args != "" {
			e.Blocks = append(e.Blocks, Block{Kind: "command", Text: t.Command + " " + t.Args})
		}
	case promptkind.CommandOutput:
		e.Title, e.Class = t.Label, e.Class+" noise"
		if strings.TrimSpace(t.Text) == "" {
			e.Blocks = append(e.Blocks, Block{Kind: "note", Text: "(nothing)"})
		} else {
			e.Blocks = append(e.Blocks, fold("output", Block{Kind: "pre", Text: t.Text}, false))
		}
	case promptkind.Context:
		e.Title, e.Class = "context: "+t.Label, e.Class+" noise"
		e.Blocks = append(e.Blocks, fold(t.Label, Block{Kind: "pre", Text: t.Text}, false))
	case promptkind.Compaction:
		e.Title, e.Class = compacted, e.Class+" noise compaction"
		e.Blocks = append(e.Blocks, Block{Kind: "note", Text: "the conversation above was replaced by this summary"},
			Block{Kind: "fold", Label: "summary", Fold: true, Parts: []Block{{Kind: "text", Text: t.Text}}})
	case promptkind.Prompt:
		if t.Context != "" {
			e.Blocks = append(e.Blocks, fold(t.Label, Block{Kind: "pre", Text: t.Context}, false))
		}
		return t.Text, false
	}
	return "", true
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
			Status: n.Status, Error: n.Error, Duration: time.Duration(n.Duration), Untimed: n.Untimed, Usage: n.Usage,
			Model: n.Model, ExitCode: n.ExitCode, Tools: n.Tools, ChildRunID: n.ChildRunID, T: l.ms(n.Start),
		}
		if c := n.Cost(); c.Known || c.Unpriced > 0 {
			row.CostUSD = &c
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
