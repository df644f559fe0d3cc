// Package diagram draws a workflow's state machine as Graphviz DOT or a
// Mermaid flowchart.
//
// Every state is a node whose shape says its kind: a box for a command step,
// a rounded box for an agent, a subroutine box for a sub-workflow call, a
// parallelogram for an operation, a note for a custom step type, a circle
// (double for failure) for a terminal state. A loop or a parallel block is
// a group (a DOT cluster, a Mermaid subgraph) holding a header node (a
// hexagon for a loop, a diamond for a parallel block) and its body steps or
// branches: the header fans out to the branches, a loop's body runs in order
// and loops back to the header. Flow edges leave states unlabelled on
// success; on_failure edges are red and labelled failure, transitions carry
// their condition, a loop's on_complete is labelled complete. An inline
// on_failure that ends the run leads to an end node saying its exit status.
package diagram

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/reelhq/reel/internal/workflow"
)

// graph is the workflow's structure, prepared once for either format.
type graph struct {
	wf       *workflow.Workflow
	parent   map[string]string // child state -> its block
	topLevel []string
	ends     []end
}

type end struct {
	id, label string
}

func newGraph(wf *workflow.Workflow) *graph {
	g := &graph{wf: wf, parent: map[string]string{}}
	for _, n := range wf.Order {
		s := wf.States[n]
		for _, c := range append(slices.Clone(s.Body), s.Parallel...) {
			if _, ok := g.parent[c]; !ok {
				g.parent[c] = n
			}
		}
	}
	for _, n := range wf.Order {
		if _, child := g.parent[n]; !child {
			g.topLevel = append(g.topLevel, n)
		}
	}
	return g
}

func (g *graph) children(s *workflow.State) []string {
	return append(slices.Clone(s.Body), s.Parallel...)
}

// nodes calls draw for every state, in file order from the top level
// down, indented by nesting: once for a step, and for a block once when
// its group opens (open) and once when it closes, its children between.
func (g *graph) nodes(draw func(s *workflow.State, indent string, open bool)) {
	var node func(name, indent string)
	node = func(name, indent string) {
		s := g.wf.States[name]
		draw(s, indent, true)
		if !isBlock(s) {
			return
		}
		for _, c := range g.children(s) {
			if g.parent[c] == name {
				node(c, indent+"  ")
			}
		}
		draw(s, indent, false)
	}
	for _, n := range g.topLevel {
		node(n, "  ")
	}
}

func isBlock(s *workflow.State) bool {
	return s.Type == workflow.TypeParallel || s.Type == workflow.TypeForEach || s.Type == workflow.TypeWhile
}

// label is the text of a state's node: its name and what kind it is.
func label(s *workflow.State) string {
	switch s.Type {
	case workflow.TypeStep:
		return s.Name + "\nstep"
	case workflow.TypeAgent:
		return s.Name + "\nagent: " + s.Provider
	case workflow.TypeCallWorkflow:
		return s.Name + "\ncall: " + s.Call.Workflow
	case workflow.TypeOperation:
		return s.Name + "\n" + s.Operation
	case workflow.TypeTerminal:
		return s.Name + "\n" + s.Status
	case workflow.TypeParallel:
		return s.Name + "\nparallel: " + s.Strategy
	case workflow.TypeForEach:
		return s.Name + "\nfor_each"
	case workflow.TypeWhile:
		return s.Name + "\nwhile " + s.While.Source
	}
	return s.Name + "\n" + s.Type
}

// blockEdge links a block to what runs inside it: a parallel block to its
// branches, a loop to its body in order, and the body's end back to the
// loop (next).
type blockEdge struct {
	from, to string
	next     bool // the body's last step back to its loop
	branch   bool // a parallel block to a branch
}

func (g *graph) blockEdges() []blockEdge {
	var out []blockEdge
	for _, n := range g.wf.Order {
		s := g.wf.States[n]
		switch s.Type {
		case workflow.TypeParallel:
			for _, c := range s.Parallel {
				out = append(out, blockEdge{from: n, to: c, branch: true})
			}
		case workflow.TypeForEach, workflow.TypeWhile:
			prev := n
			for _, c := range s.Body {
				out = append(out, blockEdge{from: prev, to: c})
				prev = c
			}
			if len(s.Body) > 0 {
				out = append(out, blockEdge{from: prev, to: n, next: true})
			}
		}
	}
	return out
}

// edge is one flow edge.
type edge struct {
	from, to, label string
	failure         bool
}

// edges lists where the flow leaves each state, in file order.
func (g *graph) edges() []edge {
	var out []edge
	for _, n := range g.wf.Order {
		s := g.wf.States[n]
		for _, t := range s.Transitions {
			l := "always"
			if t.When != nil {
				l = "when " + t.When.Source
			}
			out = append(out, edge{from: n, to: t.Goto, label: l})
		}
		if s.OnSuccess != "" {
			out = append(out, edge{from: n, to: s.OnSuccess})
		}
		if s.OnComplete != "" {
			out = append(out, edge{from: n, to: s.OnComplete, label: "complete"})
		}
		if f := s.OnFailure; f != nil {
			to := f.State
			if f.Inline {
				to = "__end_" + n
				g.ends = append(g.ends, end{to, fmt.Sprintf("end: exit %d", f.Status)})
			}
			out = append(out, edge{from: n, to: to, label: "failure", failure: true})
		}
	}
	return out
}

// DOT writes the workflow as a Graphviz digraph.
func DOT(w io.Writer, wf *workflow.Workflow) error {
	g := newGraph(wf)
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotID(wf.Name))
	b.WriteString("  rankdir=TB;\n  compound=true;\n  node [fontname=\"Helvetica\", fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=9];\n")
	b.WriteString("  __start [shape=point, width=0.15];\n")
	g.nodes(func(s *workflow.State, indent string, open bool) {
		switch {
		case !isBlock(s):
			fmt.Fprintf(&b, "%s%s [%s];\n", indent, dotID(s.Name), dotShape(s))
		case open:
			fmt.Fprintf(&b, "%ssubgraph %s {\n", indent, dotID("cluster_"+s.Name))
			fmt.Fprintf(&b, "%s  label=%s;\n%s  style=\"rounded,dashed\";\n", indent, dotID(s.Name+" ("+s.Type+")"), indent)
			fmt.Fprintf(&b, "%s  %s [%s];\n", indent, dotID(s.Name), dotShape(s))
		default:
			fmt.Fprintf(&b, "%s}\n", indent)
		}
	})
	edges := g.edges()
	for _, e := range g.ends {
		fmt.Fprintf(&b, "  %s [shape=octagon, color=red, label=%s];\n", dotID(e.id), dotID(e.label))
	}
	fmt.Fprintf(&b, "  __start -> %s;\n", dotID(wf.Initial))
	for _, e := range g.blockEdges() {
		attrs := "style=dashed"
		switch {
		case e.branch:
			attrs += ", arrowhead=empty"
		case e.next:
			attrs += `, label="next", constraint=false`
		}
		fmt.Fprintf(&b, "  %s -> %s [%s];\n", dotID(e.from), dotID(e.to), attrs)
	}
	for _, e := range edges {
		var attrs []string
		if e.label != "" {
			attrs = append(attrs, "label="+dotID(e.label))
		}
		if e.failure {
			attrs = append(attrs, "color=red", "fontcolor=red")
		}
		a := ""
		if len(attrs) > 0 {
			a = " [" + strings.Join(attrs, ", ") + "]"
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", dotID(e.from), dotID(e.to), a)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dotShape(s *workflow.State) string {
	shape := "box"
	extra := ""
	switch s.Type {
	case workflow.TypeAgent:
		extra = ", style=rounded"
	case workflow.TypeCallWorkflow:
		shape = "box3d"
	case workflow.TypeOperation:
		shape = "parallelogram"
	case workflow.TypeTerminal:
		shape = "circle"
		if s.Status == "failure" {
			shape, extra = "doublecircle", ", color=red"
		}
	case workflow.TypeParallel:
		shape = "diamond"
	case workflow.TypeForEach, workflow.TypeWhile:
		shape = "hexagon"
	case workflow.TypeStep:
	default:
		shape = "note"
	}
	return fmt.Sprintf("shape=%s%s, label=%s", shape, extra, dotID(label(s)))
}

// dotID quotes s as a DOT string.
func dotID(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// Mermaid writes the workflow as a Mermaid flowchart.
func Mermaid(w io.Writer, wf *workflow.Workflow) error {
	g := newGraph(wf)
	ids := map[string]string{}
	used := map[string]bool{}
	id := func(name string) string {
		if v, ok := ids[name]; ok {
			return v
		}
		base := "s_" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
				return r
			}
			return '_'
		}, name)
		v := base
		for i := 2; used[v]; i++ {
			v = fmt.Sprintf("%s_%d", base, i)
		}
		used[v] = true
		ids[name] = v
		return v
	}
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	b.WriteString("  start((start))\n")
	g.nodes(func(s *workflow.State, indent string, open bool) {
		switch {
		case !isBlock(s):
			fmt.Fprintf(&b, "%s%s%s\n", indent, id(s.Name), mermaidShape(s))
		case open:
			fmt.Fprintf(&b, "%ssubgraph %s [%s]\n", indent, id("group "+s.Name), mermaidText(s.Name+" ("+s.Type+")"))
			fmt.Fprintf(&b, "%s  %s%s\n", indent, id(s.Name), mermaidShape(s))
		default:
			fmt.Fprintf(&b, "%send\n", indent)
		}
	})
	edges := g.edges()
	for _, e := range g.ends {
		fmt.Fprintf(&b, "  %s{{%s}}\n", id(e.id), mermaidText(e.label))
	}
	fmt.Fprintf(&b, "  start --> %s\n", id(wf.Initial))
	blocks := g.blockEdges()
	for _, e := range blocks {
		arrow := "-.->"
		if e.next {
			arrow = "-.->|next|"
		}
		fmt.Fprintf(&b, "  %s %s %s\n", id(e.from), arrow, id(e.to))
	}
	var failures []int
	for i, e := range edges {
		arrow := "-->"
		if e.label != "" {
			arrow = "-->|" + mermaidText(e.label) + "|"
		}
		fmt.Fprintf(&b, "  %s %s %s\n", id(e.from), arrow, id(e.to))
		if e.failure {
			failures = append(failures, i)
		}
	}
	// Links are numbered in the order written: start's, the blocks', then
	// the flow's.
	offset := 1 + len(blocks)
	for _, i := range failures {
		fmt.Fprintf(&b, "  linkStyle %d stroke:red,color:red\n", offset+i)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mermaidShape(s *workflow.State) string {
	t := mermaidText(label(s))
	switch s.Type {
	case workflow.TypeAgent:
		return "(" + t + ")"
	case workflow.TypeCallWorkflow:
		return "[[" + t + "]]"
	case workflow.TypeOperation:
		return "[/" + t + "/]"
	case workflow.TypeTerminal:
		if s.Status == "failure" {
			return "(((" + t + ")))"
		}
		return "((" + t + "))"
	case workflow.TypeParallel:
		return "{" + t + "}"
	case workflow.TypeForEach, workflow.TypeWhile:
		return "{{" + t + "}}"
	case workflow.TypeStep:
		return "[" + t + "]"
	}
	return ">" + t + "]"
}

// mermaidText quotes s as a Mermaid label; quotes become entities and line
// breaks <br/>.
func mermaidText(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "\n", "<br/>", "|", "#124;", "<", "#lt;", ">", "#gt;")
	return `"` + r.Replace(s) + `"`
}
