package query

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/transcript"
)

// Side is one run's account of a step execution.
type Side struct {
	Status     string `json:"status"`
	DurationMS int64  `json:"duration_ms"`
	// Untimed says the recording gave the execution no time (an imported
	// provider stream: exectree.Node.Untimed); DurationMS is then 0 and
	// means nothing.
	Untimed bool             `json:"untimed,omitempty"`
	Usage   transcript.Usage `json:"usage"`
	// CostUSD and UnpricedSteps are the execution's cost (Cost), absent
	// when unknown.
	CostUSD       *float64 `json:"cost_usd,omitempty"`
	UnpricedSteps int      `json:"unpriced_steps,omitempty"`
	// Tools names the first tools the step called (exectree.MaxToolSeq);
	// ToolCalls counts them all.
	Tools     []string `json:"tools,omitempty"`
	ToolCalls int      `json:"tool_calls,omitempty"`
	HasOutput bool     `json:"has_output"`
	output    string   // as much as exectree keeps (exectree.MaxOutput)
	digest    [32]byte // of the whole output
	tools     uint64   // digest of every tool name
	cost      pricing.Total
}

// Cost is what the execution cost, as every reader shows it.
func (s Side) Cost() pricing.Total { return s.cost }

// Output is the execution's final output (agent reply or command output),
// for showing how it changed: its first exectree.MaxOutput bytes.
func (s *Side) Output() string { return s.output }

// StepDiff compares one step execution across two runs. A or B is nil when
// the execution happened in one run only.
type StepDiff struct {
	// Key identifies the execution: its path, the loop iterations around
	// it, its attempt and its place among repeated executions.
	Key   string `json:"key"`
	Label string `json:"label"`
	Kind  string `json:"kind"`
	A     *Side  `json:"a"`
	B     *Side  `json:"b"`
	// Changed lists what differs: status, tokens, tools, output, or
	// "only in a"/"only in b". Durations always differ and are not listed.
	Changed []string `json:"changed,omitempty"`
}

// Diff is the comparison of two runs.
type Diff struct {
	A        RunSide    `json:"a"`
	B        RunSide    `json:"b"`
	Steps    []StepDiff `json:"steps"`
	Warnings []string   `json:"warnings,omitempty"`
}

// RunSide summarizes one of the compared runs.
type RunSide struct {
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	Side
}

type entry struct {
	key, label string
	node       *exectree.Node
}

// Compare aligns the step executions of two trees and reports what differs.
func Compare(a, b *exectree.Tree) *Diff {
	d := &Diff{A: runSide(a.Root), B: runSide(b.Root)}
	for _, w := range a.Warnings {
		d.Warnings = append(d.Warnings, "a: "+w)
	}
	for _, w := range b.Warnings {
		d.Warnings = append(d.Warnings, "b: "+w)
	}
	ea, eb := flatten(a.Root), flatten(b.Root)
	inA := make(map[string]int, len(ea))
	for i, e := range ea {
		inA[e.key] = i
	}
	inB := make(map[string]*exectree.Node, len(eb))
	for _, e := range eb {
		inB[e.key] = e.node
	}
	steps := make([]StepDiff, 0, len(ea))
	pos := make(map[string]int, len(ea)) // key → index in steps
	for _, e := range ea {
		pos[e.key] = len(steps)
		steps = append(steps, compareStep(e, e.node, inB[e.key]))
	}
	// Executions only B has go right after the one B ran before them.
	at := -1
	for _, e := range eb {
		if _, ok := inA[e.key]; ok {
			at = pos[e.key]
			continue
		}
		at++
		s := compareStep(e, nil, e.node)
		steps = append(steps, StepDiff{})
		copy(steps[at+1:], steps[at:])
		steps[at] = s
		for k, v := range pos {
			if v >= at {
				pos[k] = v + 1
			}
		}
		pos[e.key] = at
	}
	d.Steps = steps
	return d
}

// Differs reports whether the runs differ: in their status, or in any
// execution's status, tokens, tools or output, or one ran a step the other
// did not. Durations always differ and do not count.
func (d *Diff) Differs() bool {
	if d.A.Status != d.B.Status {
		return true
	}
	for _, s := range d.Steps {
		if len(s.Changed) > 0 {
			return true
		}
	}
	return false
}

func runSide(n *exectree.Node) RunSide {
	return RunSide{RunID: n.RunID, Workflow: n.Name, Side: *side(n)}
}

// DurationText is how long the execution ran, "—" when its recording
// gave it no time, as every other view shows it.
func (s Side) DurationText() string {
	if s.Untimed {
		return "—"
	}
	return exectree.FormatDuration(time.Duration(s.DurationMS) * time.Millisecond)
}

func side(n *exectree.Node) *Side {
	if n == nil {
		return nil
	}
	return &Side{
		Status: n.Status, DurationMS: time.Duration(n.Duration).Milliseconds(), Untimed: n.Untimed, Usage: n.Usage, CostUSD: n.CostUSD, UnpricedSteps: n.UnpricedSteps, cost: n.Cost(),
		Tools: n.ToolSeq, ToolCalls: n.Tools, HasOutput: n.HasOutput, output: n.Output, digest: n.OutputDigest, tools: n.ToolsDigest,
	}
}

func compareStep(e entry, a, b *exectree.Node) StepDiff {
	s := StepDiff{Key: e.key, Label: e.label, Kind: e.node.Kind, A: side(a), B: side(b)}
	switch {
	case a == nil:
		s.Changed = []string{"only in b"}
	case b == nil:
		s.Changed = []string{"only in a"}
	default:
		if a.Status != b.Status {
			s.Changed = append(s.Changed, "status")
		}
		if a.Usage.InputTokens != b.Usage.InputTokens || a.Usage.OutputTokens != b.Usage.OutputTokens {
			s.Changed = append(s.Changed, "tokens")
		}
		if a.Tools != b.Tools || a.ToolsDigest != b.ToolsDigest {
			s.Changed = append(s.Changed, "tools")
		}
		if !sameOutput(side(a), side(b)) {
			s.Changed = append(s.Changed, "output")
		}
	}
	return s
}

// flatten lists the step executions in tree order with stable keys and
// readable labels: the path, the loop iterations around it ("[1][0]") and
// the attempt; steps of a sub-workflow are labelled under the calling step.
func flatten(root *exectree.Node) []entry {
	var out []entry
	var walk func(n *exectree.Node, key, self, iters, prefix string)
	walk = func(n *exectree.Node, key, self, iters, prefix string) {
		seen := map[string]int{}
		for _, c := range n.Children {
			if c.Kind == exectree.KindIteration {
				seg := fmt.Sprintf("[%d]", c.Iteration)
				walk(c, key+seg, self, iters+seg, prefix)
				continue
			}
			var seg, lab, childPrefix string
			if c.Kind == transcript.KindWorkflow && c.RunID != "" {
				seg = "@" + c.Name
				lab = self + " › workflow " + c.Name
				childPrefix = self + " › "
			} else {
				attempt := max(c.Attempt, 1)
				seg = fmt.Sprintf("/%s#%d", c.Path, attempt)
				lab = prefix + c.Path + iters
				if attempt > 1 {
					lab += fmt.Sprintf(" (attempt %d)", attempt)
				}
				childPrefix = prefix
			}
			seen[seg]++
			if k := seen[seg]; k > 1 {
				seg += fmt.Sprintf("~%d", k)
				lab += fmt.Sprintf(" (#%d)", k)
			}
			out = append(out, entry{key: key + seg, label: lab, node: c})
			if c.Kind == transcript.KindWorkflow {
				walk(c, key+seg, lab, "", childPrefix)
			} else {
				walk(c, key+seg, lab, iters, childPrefix)
			}
		}
	}
	walk(root, "", "", "", "")
	return out
}

// RenderDiff writes the comparison as a table: '=' marks executions that
// match, '~' ones that differ, '-' and '+' ones only in A or only in B.
func RenderDiff(w io.Writer, d *Diff) error {
	var sb strings.Builder
	for _, r := range []struct {
		tag string
		s   RunSide
	}{{"a", d.A}, {"b", d.B}} {
		fmt.Fprintf(&sb, "%s  %s  %s  %s  %s  %s  %s\n", r.tag, r.s.RunID, r.s.Workflow, r.s.Status,
			r.s.DurationText(), exectree.FormatUsage(r.s.Usage), r.s.Cost())
	}
	same := 0
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\n \tSTEP\tKIND\tSTATUS\tDURATION\tTOKENS\tTOOLS\tOUTPUT")
	for _, s := range d.Steps {
		mark := s.Mark()
		if mark == "=" {
			same++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", mark, s.Label, s.Kind,
			pair(s, func(x *Side) string { return x.Status }),
			pair(s, (*Side).DurationText),
			pair(s, func(x *Side) string { return itoa(x.Usage.InputTokens + x.Usage.OutputTokens) }),
			pair(s, toolList),
			outputCol(s))
	}
	tw.Flush()
	fmt.Fprintf(&sb, "%d executions, %d identical, %d differ\n", len(d.Steps), same, len(d.Steps)-same)
	_, err := io.WriteString(w, sb.String())
	return err
}

// Mark is the execution's mark in a rendered diff: '=' it matches, '~' it
// differs, '-' it is only in A, '+' only in B.
func (s StepDiff) Mark() string {
	switch {
	case s.A == nil:
		return "+"
	case s.B == nil:
		return "-"
	case len(s.Changed) > 0:
		return "~"
	}
	return "="
}

func pair(s StepDiff, f func(*Side) string) string {
	switch {
	case s.A == nil:
		return f(s.B)
	case s.B == nil:
		return f(s.A)
	}
	a, b := f(s.A), f(s.B)
	if a == b {
		return a
	}
	return a + " → " + b
}

func toolList(x *Side) string {
	if len(x.Tools) == 0 {
		return "-"
	}
	s := strings.Join(x.Tools, ",")
	if more := x.ToolCalls - len(x.Tools); more > 0 {
		s += fmt.Sprintf(",… (%d more)", more)
	}
	return s
}

// sameOutput compares two outputs by digest; a step without output has
// none to compare.
func sameOutput(a, b *Side) bool {
	return a.HasOutput == b.HasOutput && (!a.HasOutput || a.digest == b.digest)
}

func outputCol(s StepDiff) string {
	switch {
	case s.A == nil || s.B == nil:
		return "-"
	case !sameOutput(s.A, s.B):
		return "changed"
	case !s.A.HasOutput:
		return "-"
	}
	return "same"
}
