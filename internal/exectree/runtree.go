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
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reelhq/reel/internal/pricing"
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
	// Untimed, on a run, says that its recording gave none of its events
	// a time (runs.Untimed, an imported provider stream): Start and End
	// are the source file's modification time, not when it ran, and its
	// duration is unknown (0, shown "—"). Its steps without a duration
	// of their own (one their provider reported) are untimed too.
	Untimed bool `json:"untimed,omitempty"`

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

// finish fills the derived fields bottom-up: iteration groups take their
// times and status from their steps, composite nodes add up their
// subtree's tokens and cost, and every node gets its duration.
func finish(n *Node) {
	var sum transcript.Usage
	var cost pricing.Total
	for _, c := range n.Children {
		// The steps of an untimed run have no times of their own either:
		// only a duration their provider reported.
		if n.Untimed && c.Kind != transcript.KindWorkflow && c.ranMS == 0 {
			c.Untimed = true
		}
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
	case n.Untimed:
		n.Duration = 0
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
