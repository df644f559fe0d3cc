package exectree

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/promptkind"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

// builder holds the state of one file's reconstruction.
type builder struct {
	t    *Tree
	path string // the transcript's, for warnings
	root *Node
	// Open executions, by path and by path and iteration, each list in
	// start order. Closed nodes leave their lists lazily (top), so a
	// lookup costs the depth of the path, not the number of open nodes.
	byPath    map[string][]*Node
	byKey     map[pathIter][]*Node
	count     int
	last      time.Time
	paths     map[string]string
	attempt   int  // run.started events seen
	completed bool // the last attempt has its run.completed
	prices    *pricing.Table
	// tally decides which executions count among the run's steps;
	// nodes are the file's step executions, to be told.
	tally runstatus.Tally
	nodes []*Node
}

type pathIter struct {
	path string
	iter int
}

func (t *Tree) buildFile(run *runs.Run, opts Options) (*Node, error) {
	b := &builder{t: t, path: run.Path, root: &Node{Kind: transcript.KindWorkflow, open: true}, paths: map[string]string{}, prices: opts.Prices,
		byPath: map[string][]*Node{}, byKey: map[pathIter][]*Node{}}
	for rec, err := range run.Events(runs.RawLines) {
		if err != nil {
			return nil, err
		}
		if opts.Each != nil {
			opts.Each(run, rec)
		}
		b.line(rec)
	}
	root := b.root
	open := ""
	if !b.completed {
		// Running while a recorder holds the file, else interrupted.
		open = run.Status()
		root.Status = open
		root.End = b.last
	}
	b.closeOpen(open)
	for _, n := range b.nodes {
		_, n.Superseded = b.tally.Status(n.ordinal, open)
	}
	b.nodes = nil
	if b.attempt > 1 {
		root.Attempts = b.attempt
	}
	// A child run a resume continued keeps its run id: it hangs once,
	// under the latest execution that started it (the one that stands),
	// so that it is neither shown nor added up twice. The superseded
	// executions keep its id.
	carrier := map[string]*Node{}
	Walk(root, func(n *Node, _ int) {
		if n.ChildRunID != "" {
			if c := carrier[n.ChildRunID]; c == nil || n.seq > c.seq {
				carrier[n.ChildRunID] = n
			}
		}
	})
	// Children first so their totals are known when the parents add up.
	var attach func(n *Node)
	attach = func(n *Node) {
		for _, c := range n.Children {
			attach(c)
		}
		if n.ChildRunID == "" || carrier[n.ChildRunID] != n {
			return
		}
		cr, err := run.Child(n.ChildRunID)
		if err != nil {
			t.unread(n.ChildRunID, err)
			t.warn("%s: step %s: %v", run.Path, n.Path, err)
			return
		}
		child, err := t.buildFile(cr, opts)
		if err != nil {
			t.unread(n.ChildRunID, err)
			t.warn("step %s: child run %s: %v", n.Path, n.ChildRunID, err)
			return
		}
		n.Children = append(n.Children, child)
	}
	attach(root)
	finish(root)
	return root, nil
}

// closeOpen gives the executions left open the status status, ending
// them at the last event seen.
func (b *builder) closeOpen(status string) {
	for _, list := range b.byPath {
		for _, n := range list {
			if n.open {
				n.Status = status
				n.End = b.last
				n.open = false
			}
		}
	}
	clear(b.byPath)
	clear(b.byKey)
}

// line folds one record into the tree.
func (b *builder) line(rec *runs.Record) {
	switch rec.Type {
	case transcript.MessageUser, transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult:
		b.exchange(rec)
		return
	}
	ev := rec.Event()
	if ev == nil {
		return
	}
	before := b.last
	b.seen(ev.Timestamp)
	sp := ev.Step()
	switch ev.Type {
	case transcript.RunStarted:
		b.runStarted(ev, sp, before)
	case transcript.RunCompleted:
		b.runCompleted(ev, sp)
	case transcript.StepStarted:
		b.stepStarted(ev, sp, rec.Line)
	case transcript.StepCompleted:
		b.stepCompleted(ev, sp, rec.Line)
	case transcript.CallWorkflowStarted:
		b.callStarted(ev, rec.Line)
	}
}

// exchange counts a message or tool event towards its step. Exchange
// events only count there: read the few envelope fields they need instead
// of decoding the payload.
func (b *builder) exchange(rec *runs.Record) {
	env := rec.Envelope()
	if env == nil {
		return
	}
	b.seen(env.Time())
	n := b.owner(b.intern(env.Path), env.Iteration)
	switch rec.Type {
	case transcript.ToolCall:
		n.Tools++
		name := ""
		if v, ok, _ := rawjson.Field(env.Payload, "name"); ok {
			name, _ = rawjson.String(v)
		}
		n.addTool(b.intern([]byte(name)))
	case transcript.ToolResult:
		if v, ok, _ := rawjson.Field(env.Payload, "error"); ok {
			if s, _ := rawjson.String(v); strings.HasPrefix(s, "no result") {
				n.Dangling++
			}
		}
	default:
		n.Messages++
		if rec.Type == transcript.MessageUser && promptkind.MessageJSON(env.Payload) == promptkind.Prompt {
			n.UserTurns++
		}
	}
}

// runStarted opens the run, or, on a resume, a new attempt of it; before
// is the last time seen ahead of this event.
func (b *builder) runStarted(ev *transcript.ExchangeEvent, sp *transcript.StepPayload, before time.Time) {
	b.attempt++
	var in transcript.RunInput
	known := sp != nil && sp.Input != nil && transcript.DecodeResult(sp.Input, &in) == nil
	b.tally.RunStarted(in.Reused, known)
	if b.attempt > 1 {
		// A resume: what the attempt before left open stays so, ended at
		// that attempt's last event.
		b.last, before = before, b.last
		b.closeOpen(StatusInterrupted)
		b.last = before
		b.completed = false
		b.root.open = true
		// The account of the attempt before is no longer the run's:
		// until this one completes, the subtree's sum stands in.
		b.root.Usage, b.root.CostUSD, b.root.recorded, b.root.ExitCode, b.root.Error = transcript.Usage{}, nil, false, nil, ""
		return
	}
	b.root.RunID = ev.RunID
	b.root.Start = ev.Timestamp
	b.root.Untimed = runs.Untimed(sp)
	if sp != nil {
		b.root.Name = sp.Name
	}
}

// runCompleted closes the run with the status and account its
// run.completed recorded.
func (b *builder) runCompleted(ev *transcript.ExchangeEvent, sp *transcript.StepPayload) {
	b.completed = true
	r := b.root
	if r.RunID == "" {
		r.RunID = ev.RunID
	}
	r.End = ev.Timestamp
	r.open = false
	r.Status = StatusSuccess
	if sp == nil {
		return
	}
	if r.Name == "" {
		r.Name = sp.Name
	}
	r.Error = sp.Error
	if sp.Error != "" {
		r.Status = StatusFailure
	}
	var rr transcript.RunResult
	if sp.Result != nil && transcript.DecodeResult(sp.Result, &rr) == nil {
		if rr.Status != "" {
			r.Status = rr.Status
		}
		r.Usage = rr.Usage
		r.CostUSD, r.recorded = rr.CostUSD, true
		code := rr.ExitCode
		r.ExitCode = &code
		r.ranMS = rr.DurationMS
	}
}

// stepStarted opens a step execution under the execution it belongs to,
// while the tree's node budget lasts.
func (b *builder) stepStarted(ev *transcript.ExchangeEvent, sp *transcript.StepPayload, lineNo int) {
	t := b.t
	if sp == nil {
		t.warn("%s: line %d: step.started without a step payload", b.path, lineNo)
		return
	}
	ord := b.tally.StepStarted(ev.Path, ev.Iteration, sp.Attempt)
	if t.nodesLeft <= 0 {
		t.cut++
		return
	}
	t.nodesLeft--
	parent := b.parentFor(ev.Path, ev.Iteration)
	b.count++
	n := &Node{
		Kind: sp.Kind, Name: sp.Name, Path: ev.Path, Iteration: ev.Iteration,
		Attempt: sp.Attempt, Start: ev.Timestamp, open: true, seq: b.count, ordinal: ord,
	}
	b.nodes = append(b.nodes, n)
	if b.attempt > 1 {
		n.RunAttempt = b.attempt
	}
	addChild(parent, n)
	b.push(n)
}

// stepCompleted closes the execution a step.completed ends and takes its
// status and result.
func (b *builder) stepCompleted(ev *transcript.ExchangeEvent, sp *transcript.StepPayload, lineNo int) {
	t := b.t
	if sp == nil {
		t.warn("%s: line %d: step.completed without a step payload", b.path, lineNo)
		return
	}
	b.tally.StepCompleted(ev.Path, ev.Iteration, sp.Error)
	n := b.take(ev.Path, ev.Iteration)
	if n == nil && t.cut > 0 {
		return // its start was past MaxNodes
	}
	if n == nil {
		t.warn("%s: line %d: step.completed for %s with no open step.started", b.path, lineNo, ev.Path)
		n = &Node{Kind: sp.Kind, Name: sp.Name, Path: ev.Path, Iteration: ev.Iteration, Attempt: sp.Attempt, Start: ev.Timestamp}
		addChild(b.parentFor(ev.Path, ev.Iteration), n)
	}
	n.End = ev.Timestamp
	n.open = false
	n.Error = sp.Error
	n.Status = runstatus.StepError(sp.Error)
	if n.Kind == "" {
		n.Kind = sp.Kind
	}
	if sp.Result != nil {
		b.stepResult(n, sp.Result)
	}
}

// stepResult takes what an agent or command step's result says into its
// node: usage, cost, time and output; exit code and output.
func (b *builder) stepResult(n *Node, result any) {
	switch n.Kind {
	case transcript.KindAgent:
		var ar transcript.AgentResult
		if decodeAgentResult(result, &ar) == nil {
			n.Usage = ar.Usage
			n.setCost(b.prices.Step(&ar))
			n.ranMS = ar.DurationMS
			n.Provider, n.Model = ar.Provider, ar.Model
			b.t.setOutput(n, ar.Output)
		}
	case transcript.KindCommand:
		var cr transcript.CommandResult
		if transcript.DecodeResult(result, &cr) == nil {
			code := cr.ExitCode
			n.ExitCode = &code
			b.t.setOutput(n, cr.Output)
		}
	}
}

// callStarted links the child run a call_workflow step started to its
// execution.
func (b *builder) callStarted(ev *transcript.ExchangeEvent, lineNo int) {
	t := b.t
	if ev.ChildRunID == "" {
		t.warn("%s: line %d: step.call_workflow.started without child_run_id", b.path, lineNo)
		return
	}
	n := b.find(ev.Path, ev.Iteration)
	if n == nil {
		t.warn("%s: line %d: step.call_workflow.started for %s outside its step", b.path, lineNo, ev.Path)
		b.count++
		n = &Node{Kind: transcript.KindCallWorkflow, Name: ev.Path, Path: ev.Path, Iteration: ev.Iteration, Start: ev.Timestamp, End: ev.Timestamp, Status: StatusSuccess, seq: b.count}
		addChild(b.root, n)
	}
	n.ChildRunID = ev.ChildRunID
}

func (b *builder) seen(ts time.Time) {
	if ts.After(b.last) {
		b.last = ts
	}
}

// decodeAgentResult takes the fast path for results read from a file.
func decodeAgentResult(result any, ar *transcript.AgentResult) error {
	if raw, ok := result.(json.RawMessage); ok {
		return runs.DecodeAgentResult(raw, ar)
	}
	return transcript.DecodeResult(result, ar)
}

// push opens n.
func (b *builder) push(n *Node) {
	b.byPath[n.Path] = append(b.byPath[n.Path], n)
	k := pathIter{n.Path, n.Iteration}
	b.byKey[k] = append(b.byKey[k], n)
}

// latest returns the last node of list still open, dropping the closed
// ones above it.
func latest(list []*Node) ([]*Node, *Node) {
	for len(list) > 0 && !list[len(list)-1].open {
		list[len(list)-1] = nil
		list = list[:len(list)-1]
	}
	if len(list) == 0 {
		return list, nil
	}
	return list, list[len(list)-1]
}

// latestAt returns the latest open execution at path p.
func (b *builder) latestAt(p string) *Node {
	list, ok := b.byPath[p]
	if !ok {
		return nil
	}
	list, n := latest(list)
	if len(list) == 0 {
		delete(b.byPath, p)
	} else {
		b.byPath[p] = list
	}
	return n
}

// openAncestor is the open execution at the longest proper ancestor path
// of p, the latest started among those at that path.
func (b *builder) openAncestor(p string) *Node {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' {
			if n := b.latestAt(p[:i]); n != nil {
				return n
			}
		}
	}
	if p != "" {
		return b.latestAt("")
	}
	return nil
}

// parentFor is the open execution a step at path p belongs to: the open
// node with the longest ancestor path, the latest started among equals.
func (b *builder) parentFor(p string, iteration int) *Node {
	best := b.openAncestor(p)
	if best == nil {
		return b.root
	}
	if (best.Kind == transcript.KindForEach || best.Kind == transcript.KindWhile) && !isHookOf(best.Path, p) {
		return iterationNode(best, iteration)
	}
	return best
}

// isHookOf reports whether p is the path of a hook of the step at a
// (docs/decisions.md §11): a loop's own hooks run outside its iterations.
func isHookOf(a, p string) bool {
	rest, ok := strings.CutPrefix(p, a+".")
	return ok && (rest == "pre_hook" || rest == "post_hook")
}

// iterationNode returns the group of loop's iteration i, creating it. A
// loop running its iterations in parallel interleaves them, so the group is
// looked up, not just taken from the end.
func iterationNode(loop *Node, i int) *Node {
	if n := loop.iters[i]; n != nil {
		return n
	}
	n := &Node{Kind: KindIteration, Name: "iteration " + strconv.Itoa(i), Path: loop.Path, Iteration: i}
	if loop.iters == nil {
		loop.iters = map[int]*Node{}
	}
	loop.iters[i] = n
	loop.Children = append(loop.Children, n)
	return n
}

func addChild(parent, n *Node) { parent.Children = append(parent.Children, n) }

// find returns the latest open execution at path p, preferring one of the
// same iteration.
func (b *builder) find(p string, iteration int) *Node {
	k := pathIter{p, iteration}
	if list, ok := b.byKey[k]; ok {
		list, n := latest(list)
		if len(list) == 0 {
			delete(b.byKey, k)
		} else {
			b.byKey[k] = list
		}
		if n != nil {
			return n
		}
	}
	return b.latestAt(p)
}

// take closes and returns the execution a step.completed closes.
func (b *builder) take(p string, iteration int) *Node {
	n := b.find(p, iteration)
	if n != nil {
		n.open = false
	}
	return n
}

// owner is the execution that exchange events at p belong to: the step at
// that path, else its closest open ancestor, else the run.
func (b *builder) owner(p string, iteration int) *Node {
	if n := b.find(p, iteration); n != nil {
		return n
	}
	if n := b.openAncestor(p); n != nil {
		return n
	}
	return b.root
}

// intern returns p as a string, allocating each distinct path once.
func (b *builder) intern(p []byte) string {
	if s, ok := b.paths[string(p)]; ok {
		return s
	}
	s := string(p)
	b.paths[s] = s
	return s
}
