// Package exectree rebuilds the execution tree of a run from its transcript
// and the transcripts of the sub-workflows it called.
//
// Every step execution is its own node: each loop iteration, each retry
// attempt, each parallel branch. Nodes are matched by the order of
// step.started and step.completed events at a path and iteration, which is
// what keeps executions of nested loops apart (docs/decisions.md §3).
package exectree

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/promptkind"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/warn"
	"github.com/reelhq/reel/transcript"
)

// Statuses a node can have: the run statuses of package runstatus.
const (
	StatusSuccess     = runstatus.Success
	StatusFailure     = runstatus.Failure
	StatusCancelled   = runstatus.Cancelled
	StatusInterrupted = runstatus.Interrupted
	StatusRunning     = runstatus.Running
)

// KindIteration is the kind of the nodes that group one loop iteration's
// steps under a for_each or while node.
const KindIteration = "iteration"

// Node is one execution: a run, a step execution, or a loop iteration.
//
// It stays within 512 bytes (TestNodeFitsASmallSizeClass): past that, each
// node carries a malloc header and the collector scans it the slow way,
// which costs reel tree a fifth more CPU on a 100k-event run.
type Node struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Iteration int    `json:"iteration"`
	Attempt   int    `json:"attempt,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	// Status is success, failure or cancelled; for an execution that
	// started and never completed, running while its run is being
	// written, else interrupted.
	Status   string    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Start    time.Time `json:"start,omitzero"`
	End      time.Time `json:"end,omitzero"`
	Duration Millis    `json:"duration_ms"`
	// Usage and CostUSD are the node's own for agent steps and the sum of
	// the subtree for the others (a run's: pricing.RunTotal). CostUSD is
	// absent when nothing in it has a known cost (Cost says "—").
	Usage   transcript.Usage `json:"usage"`
	CostUSD *float64         `json:"cost_usd,omitempty"`
	// UnpricedSteps counts the agent steps in the subtree whose cost is
	// unknown (no reported cost, no price for the model): CostUSD leaves
	// them out.
	UnpricedSteps int    `json:"unpriced_steps,omitempty"`
	Provider      string `json:"provider,omitempty"`
	Model         string `json:"model,omitempty"`
	ExitCode      *int   `json:"exit_code,omitempty"`
	Messages      int    `json:"messages,omitempty"`
	// UserTurns counts the step's message.user events that are turns the
	// user took (not promptkind.Noise): numbered from 1 (the step's
	// prompt) as the run's display numbers them.
	UserTurns int `json:"user_turns,omitempty"`
	Tools     int `json:"tools,omitempty"`
	Dangling  int `json:"dangling_tools,omitempty"`
	// ChildRunID is the run a call_workflow step started; its tree is the
	// node's child of kind workflow (Tree.Unread says why it is not, when
	// it could not be read).
	ChildRunID string  `json:"child_run_id,omitempty"`
	Children   []*Node `json:"children,omitempty"`
	// Attempts, on a run, counts the runs of its transcript when it was
	// resumed (2 after one resume). RunAttempt, on an execution of a
	// resumed run, is the attempt that ran it; the steps of the first
	// attempt leave it out, and so do those of runs never resumed.
	Attempts   int `json:"attempts,omitempty"`
	RunAttempt int `json:"run_attempt,omitempty"`
	// Superseded, on an execution that no longer counts among the run's
	// steps, says what stands in its place (package runstatus, Tally): a
	// later retry attempt ("retry") or a resume that ran the step again
	// ("resume").
	Superseded string `json:"superseded,omitempty"`

	// ToolSeq names the first MaxToolSeq tools the step called, in order,
	// and ToolsDigest digests the names of all of them. Output is the
	// step's final output (agent reply or command output), its first
	// MaxOutput bytes while the tree's budget (MaxOutputs) lasts, and
	// OutputDigest digests all of it when HasOutput. They are for
	// comparing runs, in memory that does not grow with what the steps
	// said, and stay out of the tree's JSON.
	ToolSeq      []string          `json:"-"`
	ToolsDigest  uint64            `json:"-"`
	Output       string            `json:"-"`
	OutputDigest [sha256.Size]byte `json:"-"`
	HasOutput    bool              `json:"-"`

	open bool
	// recorded is set on a run while CostUSD holds the cost its
	// run.completed recorded, until finish.
	recorded bool
	seq      int           // order of start, to pick the latest of several open nodes
	ordinal  int           // position of its step.started among the file's
	iters    map[int]*Node // a loop's iteration groups by index
	ranMS    int64         // a run's or an agent step's own duration_ms, from its result
	// computed is the part of CostUSD reel priced from the table (steps
	// whose provider reported none).
	computed float64
}

// Cost is what the execution cost, as every reader shows it.
func (n *Node) Cost() pricing.Total {
	c := pricing.Total{Computed: n.computed, Known: n.CostUSD != nil, Unpriced: n.UnpricedSteps}
	if n.CostUSD != nil {
		c.USD = *n.CostUSD
	}
	return c
}

// recordedCost is the cost the run's run.completed recorded, if any.
func (n *Node) recordedCost() *float64 {
	if n.recorded {
		return n.CostUSD
	}
	return nil
}

func (n *Node) setCost(c pricing.Total) {
	n.CostUSD, n.UnpricedSteps, n.computed, n.recorded = c.USDPtr(), c.Unpriced, c.Computed, false
}

// MaxToolSeq is how many tool names a node keeps in ToolSeq.
const MaxToolSeq = 64

// Bounds of the outputs a tree keeps (Node.Output).
const (
	MaxOutput  = 64 << 10
	MaxOutputs = 64 << 20
)

// setOutput records a step's final output: its digest, and as much of it
// as the bounds allow.
func (t *Tree) setOutput(n *Node, out string) {
	n.HasOutput = out != ""
	n.OutputDigest = sha256.Sum256([]byte(out))
	keep := min(len(out), MaxOutput, max(0, MaxOutputs-t.outputs))
	for keep > 0 && keep < len(out) && !utf8.RuneStart(out[keep]) {
		keep--
	}
	n.Output = strings.Clone(out[:keep])
	t.outputs += keep
}

// addTool counts a tool call in ToolSeq and ToolsDigest (FNV-1a over the
// names, each followed by a NUL).
func (n *Node) addTool(name string) {
	if len(n.ToolSeq) < MaxToolSeq {
		n.ToolSeq = append(n.ToolSeq, name)
	}
	h := n.ToolsDigest
	if h == 0 {
		h = 14695981039346656037
	}
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	n.ToolsDigest = h * 1099511628211
}

// Millis marshals a duration as whole milliseconds.
type Millis time.Duration

// MarshalJSON writes the duration in milliseconds.
func (m Millis) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprint(time.Duration(m).Milliseconds())), nil
}

// Tree is a reconstructed run.
type Tree struct {
	Root *Node `json:"run"`
	// Warnings name what could not be read: malformed lines, torn tails,
	// missing child transcripts. The tree holds everything that could.
	// They are the run's warnings (runs.Run.Warnings), repeated ones
	// summarised.
	Warnings []string `json:"warnings,omitempty"`
	// Unread says, by child run id, why a sub-workflow a call_workflow
	// step started is not in the tree.
	Unread map[string]string `json:"-"`

	warns     *warn.List
	nodesLeft int // Options.MaxNodes less the nodes made
	cut       int // step executions past MaxNodes
	outputs   int // bytes of Node.Output kept
}

// Options tune Build.
type Options struct {
	// Prices price the agent steps whose provider reported no cost (nil:
	// pricing.Default()).
	Prices *pricing.Table
	// MaxNodes bounds the step executions the tree holds, across the run
	// and its sub-workflows (default 200,000): memory follows the tree,
	// not the bytes of the files, and a file of a million step.started
	// lines cannot exhaust it. Executions past it are counted in a
	// warning, not shown.
	MaxNodes int
	// Each, when set, sees every record Build reads, of the run and of each
	// sub-workflow, in the order read: a view that needs more of the same
	// events than the tree (the run page) reads each transcript once.
	Each func(run *runs.Run, rec *runs.Record)
}

// DefaultMaxNodes is Options.MaxNodes' default.
const DefaultMaxNodes = 200_000

// Build reads the run's transcript and, recursively, the transcripts of
// the child runs it started (as deep as runs.MaxDepth), and returns the
// execution tree. A transcript that cannot be read is an error; damage
// inside one becomes warnings.
func Build(run *runs.Run, opts Options) (*Tree, error) {
	if opts.MaxNodes <= 0 {
		opts.MaxNodes = DefaultMaxNodes
	}
	if opts.Prices == nil {
		opts.Prices = pricing.Default()
	}
	t := &Tree{nodesLeft: opts.MaxNodes, warns: run.Warnings()}
	root, err := t.buildFile(run, opts)
	if err != nil {
		return nil, err
	}
	t.Root = root
	if t.cut > 0 {
		t.warn("the tree holds the first %d step executions; %d more are not shown (Options.MaxNodes)", opts.MaxNodes, t.cut)
	}
	t.Warnings = t.warns.Strings()
	return t, nil
}

func (t *Tree) warn(format string, args ...any) { t.warns.Addf(format, args...) }

func (t *Tree) unread(id string, err error) {
	if t.Unread == nil {
		t.Unread = map[string]string{}
	}
	t.Unread[id] = err.Error()
}

// builder holds the state of one file's reconstruction.
type builder struct {
	t    *Tree
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
	b := &builder{t: t, root: &Node{Kind: transcript.KindWorkflow, open: true}, paths: map[string]string{}, prices: opts.Prices,
		byPath: map[string][]*Node{}, byKey: map[pathIter][]*Node{}}
	for rec, err := range run.Events(runs.RawLines) {
		if err != nil {
			return nil, err
		}
		if opts.Each != nil {
			opts.Each(run, rec)
		}
		b.line(t, run.Path, rec)
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

// line folds one record into the tree and reports whether it was the
// run.completed event.
func (b *builder) line(t *Tree, path string, rec *runs.Record) bool {
	lineNo := rec.Line
	typ := rec.Type
	switch typ {
	case transcript.MessageUser, transcript.MessageAssistant, transcript.ToolCall, transcript.ToolResult:
		// Exchange events only count towards their step: read the few
		// envelope fields they need instead of decoding the payload.
		env := rec.Envelope()
		if env == nil {
			return false
		}
		b.seen(env.Time())
		n := b.owner(b.intern(env.Path), env.Iteration)
		switch typ {
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
			if typ == transcript.MessageUser && promptkind.MessageJSON(env.Payload) == promptkind.Prompt {
				n.UserTurns++
			}
		}
		return false
	}
	evp := rec.Event()
	if evp == nil {
		return false
	}
	ev := *evp
	before := b.last
	b.seen(ev.Timestamp)
	sp := ev.Step()
	switch ev.Type {
	case transcript.RunStarted:
		b.attempt++
		var in transcript.RunInput
		known := sp != nil && sp.Input != nil && transcript.DecodeResult(sp.Input, &in) == nil
		b.tally.RunStarted(in.Reused, known)
		if b.attempt > 1 {
			// A resume: what the attempt before left open stays so,
			// ended at that attempt's last event.
			b.last, before = before, b.last
			b.closeOpen(StatusInterrupted)
			b.last = before
			b.completed = false
			b.root.open = true
			// The account of the attempt before is no longer the run's:
			// until this one completes, the subtree's sum stands in.
			b.root.Usage, b.root.CostUSD, b.root.recorded, b.root.ExitCode, b.root.Error = transcript.Usage{}, nil, false, nil, ""
			return false
		}
		b.root.RunID = ev.RunID
		b.root.Start = ev.Timestamp
		if sp != nil {
			b.root.Name = sp.Name
		}
	case transcript.RunCompleted:
		b.completed = true
		r := b.root
		if r.RunID == "" {
			r.RunID = ev.RunID
		}
		r.End = ev.Timestamp
		r.open = false
		r.Status = StatusSuccess
		if sp != nil {
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
		return true
	case transcript.StepStarted:
		if sp == nil {
			t.warn("%s: line %d: step.started without a step payload", path, lineNo)
			return false
		}
		ord := b.tally.StepStarted(ev.Path, ev.Iteration, sp.Attempt)
		if t.nodesLeft <= 0 {
			t.cut++
			return false
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
	case transcript.StepCompleted:
		if sp == nil {
			t.warn("%s: line %d: step.completed without a step payload", path, lineNo)
			return false
		}
		b.tally.StepCompleted(ev.Path, ev.Iteration, sp.Error)
		n := b.take(ev.Path, ev.Iteration)
		if n == nil && t.cut > 0 {
			return false // its start was past MaxNodes
		}
		if n == nil {
			t.warn("%s: line %d: step.completed for %s with no open step.started", path, lineNo, ev.Path)
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
			switch n.Kind {
			case transcript.KindAgent:
				var ar transcript.AgentResult
				if decodeAgentResult(sp.Result, &ar) == nil {
					n.Usage = ar.Usage
					n.setCost(b.prices.Step(&ar))
					n.ranMS = ar.DurationMS
					n.Provider, n.Model = ar.Provider, ar.Model
					t.setOutput(n, ar.Output)
				}
			case transcript.KindCommand:
				var cr transcript.CommandResult
				if transcript.DecodeResult(sp.Result, &cr) == nil {
					code := cr.ExitCode
					n.ExitCode = &code
					t.setOutput(n, cr.Output)
				}
			}
		}
	case transcript.CallWorkflowStarted:
		if ev.ChildRunID == "" {
			t.warn("%s: line %d: step.call_workflow.started without child_run_id", path, lineNo)
			return false
		}
		n := b.find(ev.Path, ev.Iteration)
		if n == nil {
			t.warn("%s: line %d: step.call_workflow.started for %s outside its step", path, lineNo, ev.Path)
			n = b.root
			b.count++
			c := &Node{Kind: transcript.KindCallWorkflow, Name: ev.Path, Path: ev.Path, Iteration: ev.Iteration, Start: ev.Timestamp, End: ev.Timestamp, Status: StatusSuccess, seq: b.count}
			addChild(n, c)
			n = c
		}
		n.ChildRunID = ev.ChildRunID
	}
	return false
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

// finish fills the derived fields bottom-up: iteration groups take their
// times and status from their steps, composite nodes add up their
// subtree's tokens and cost, and every node gets its duration.
func finish(n *Node) {
	var sum transcript.Usage
	var cost pricing.Total
	for _, c := range n.Children {
		finish(c)
		sum.Add(c.Usage)
		cost.Add(c.Cost())
	}
	if n.Status == StatusInterrupted {
		// An open execution lasted at least as long as what ran inside it.
		for _, c := range n.Children {
			if c.End.After(n.End) {
				n.End = c.End
			}
		}
	}
	if n.Kind == KindIteration {
		for _, c := range n.Children {
			if n.Start.IsZero() || !c.Start.IsZero() && c.Start.Before(n.Start) {
				n.Start = c.Start
			}
			if c.End.After(n.End) {
				n.End = c.End
			}
		}
		// An iteration fails when a step's last attempt failed; a failed
		// attempt that a retry made good does not count.
		final := map[string]string{}
		for _, c := range n.Children {
			final[c.Path] = c.Status
		}
		n.Status = StatusSuccess
		for _, st := range final {
			if st == StatusInterrupted {
				n.Status = StatusInterrupted
				break
			}
			if st == StatusFailure {
				n.Status = StatusFailure
			}
		}
	}
	if n.Kind != transcript.KindAgent && len(n.Children) > 0 {
		// A run.completed total, when present, is the run's own account;
		// the subtree's sum stands in when it is missing.
		if n.Usage == (transcript.Usage{}) {
			n.Usage = sum
		}
		// A recorded cost counts only what providers reported: the steps
		// reel priced from the table are added to it (pricing.RunTotal),
		// so that it is the figure every other reader gives.
		n.setCost(pricing.RunTotal(n.recordedCost(), cost))
	} else if n.recorded {
		n.setCost(pricing.RunTotal(n.recordedCost(), pricing.Total{}))
	}
	if !n.Start.IsZero() && !n.End.IsZero() && n.End.After(n.Start) {
		n.Duration = Millis(n.End.Sub(n.Start))
	}
	own := Millis(time.Duration(n.ranMS) * time.Millisecond)
	switch {
	case n.Attempts > 1 && n.ranMS > 0:
		// A resumed run ran for the time its attempts ran, not for the
		// time between its first start and its last end.
		n.Duration = own
	case own > n.Duration:
		// A run's or an agent step's own account of its time stands when
		// its events span less: a recording whose events carry no real
		// times (an agentlog trace, a provider stream) was imported
		// with them all at one instant.
		n.Duration = own
	}
}

// Walk calls fn for every node in depth-first order with its depth.
func Walk(n *Node, fn func(n *Node, depth int)) {
	var walk func(n *Node, d int)
	walk = func(n *Node, d int) {
		fn(n, d)
		for _, c := range n.Children {
			walk(c, d+1)
		}
	}
	walk(n, 0)
}
