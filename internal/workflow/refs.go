package workflow

import (
	"fmt"
	"slices"
	"strings"
	"text/template/parse"
)

// ref is one namespace reference found in a template or an expression:
// the namespace and the literal keys that follow it
// ({{.states.build.Output}} is states [build Output]).
type ref struct {
	ns   string
	path []string
	text string
}

// refs returns the namespace references of t: field chains read from the
// root data (.inputs.x, where dot has not been rebound by range or with),
// variables rooted at $ ($.inputs.x, which dot-less references become),
// and index calls on a namespace (index .states "build").
func (t *Template) refs() []ref {
	var out []ref
	t.walkDot(func(n parse.Node, root bool) {
		switch n := n.(type) {
		case *parse.FieldNode:
			if root && len(n.Ident) > 0 {
				out = append(out, ref{ns: n.Ident[0], path: n.Ident[1:], text: n.String()})
			}
		case *parse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				out = append(out, ref{ns: n.Ident[1], path: n.Ident[2:], text: "." + strings.Join(n.Ident[1:], ".")})
			}
		case *parse.CommandNode:
			if r, ok := indexRef(n, root); ok {
				out = append(out, r)
			}
		}
	})
	return out
}

// indexRef reads `index .states "build" "Output"` (or $.states) as the
// reference states [build Output].
func indexRef(c *parse.CommandNode, root bool) (ref, bool) {
	if len(c.Args) < 3 {
		return ref{}, false
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); !ok || id.Ident != "index" {
		return ref{}, false
	}
	var ns string
	switch a := c.Args[1].(type) {
	case *parse.FieldNode:
		if !root || len(a.Ident) != 1 {
			return ref{}, false
		}
		ns = a.Ident[0]
	case *parse.VariableNode:
		if len(a.Ident) != 2 || a.Ident[0] != "$" {
			return ref{}, false
		}
		ns = a.Ident[1]
	default:
		return ref{}, false
	}
	var path []string
	for _, a := range c.Args[2:] {
		s, ok := a.(*parse.StringNode)
		if !ok {
			break
		}
		path = append(path, s.Text)
	}
	if len(path) == 0 {
		return ref{}, false
	}
	return ref{ns: ns, path: path, text: c.String()}, true
}

// stateNames returns the states refs read.
func stateNames(refs []ref) []string {
	var out []string
	for _, r := range refs {
		if r.ns == NSStates && len(r.path) > 0 {
			out = append(out, r.path[0])
		}
	}
	return out
}

// Site says where a template or an expression sits, for the reference
// checks that depend on it.
type Site struct {
	// State is the state the field belongs to; nil for a workflow-level
	// field (outputs, workflow hooks).
	State *State
	// What names the field in messages ("command", "hooks.post").
	What string
	// SelfOK allows the state's own result: it is read after the state
	// ran (transitions, an inline on_failure message, a post hook).
	SelfOK bool
	// AnyOrder skips the check that a referenced state can have run
	// before: the field is read when any state may or may not have run
	// (while and break_when, the workflow's outputs and end hooks).
	AnyOrder bool
	// ErrorHook allows .error (a workflow_error hook).
	ErrorHook bool
	// LoopScope allows .loop in a field of a loop state that is read
	// inside the loop's iterations (while, break_when), as in AWF.
	LoopScope bool
	// Lenient makes a bad reference a warning instead of a problem. AWF's
	// validate checks the references of command, dir, a loop's items and
	// max_iterations and hooks only; elsewhere (prompts, messages, call
	// and operation inputs, expressions) reel reports what it finds as a
	// warning, so that every file AWF accepts still loads, and
	// `reel validate --strict` refuses it.
	Lenient bool
}

// checkTemplate records a problem for every reference of t that cannot
// resolve at site: an unknown namespace, an undefined input, an unknown
// state or one that cannot have run before, a property in the wrong case,
// .loop outside a loop body, .error outside an error hook.
func (l *loader) checkTemplate(wf *Workflow, t *Template, site Site) {
	if t == nil {
		return
	}
	for _, r := range t.refs() {
		l.checkRef(wf, r, t.Pos, site, "{{"+r.text+"}}", false)
	}
}

// checkExpr is checkTemplate for an expression.
func (l *loader) checkExpr(wf *Workflow, e *Expr, site Site) {
	if e == nil {
		return
	}
	for _, r := range e.refs() {
		l.checkRef(wf, r, e.Pos, site, r.text, true)
	}
}

func (l *loader) checkRef(wf *Workflow, r ref, p Pos, site Site, shown string, isExpr bool) {
	c := &refCheck{l: l, wf: wf, r: r, p: p, site: site, shown: shown, where: site.What, consequence: "rendering it fails"}
	if site.State != nil {
		c.where = fmt.Sprintf("state %q %s", site.State.Name, site.What)
	}
	if isExpr {
		c.consequence = "evaluating it fails"
	}
	switch r.ns {
	case NSInputs:
		if len(r.path) == 0 {
			return
		}
		names := make([]string, len(wf.Inputs))
		for i, in := range wf.Inputs {
			names[i] = in.Name
		}
		if !contains(names, r.path[0]) {
			c.bad("undefined input %q%s", r.path[0], didYouMean(r.path[0], names))
		}
	case NSStates:
		c.state(isExpr)
	case NSWorkflow:
		c.prop(WorkflowProps, ".workflow")
	case NSContext:
		c.prop(ContextProps, ".context")
	case NSError:
		if !site.ErrorHook {
			c.bad(".error is only set in a workflow_error hook")
			return
		}
		c.prop(ErrorProps, ".error")
	case NSLoop:
		c.loop()
	case NSAWF:
		if len(r.path) > 0 && !contains(AWFDirs, r.path[0]) {
			c.bad(".awf has no key %q (one of %s)%s", r.path[0], strings.Join(AWFDirs, ", "), didYouMean(r.path[0], AWFDirs))
		}
	case NSEnv, NSTurn:
	default:
		c.bad("unknown namespace %q (one of %s)%s", r.ns, strings.Join(Namespaces, ", "), didYouMean(r.ns, Namespaces))
	}
}

// refCheck is one reference being checked, and how its problems are told.
type refCheck struct {
	l            *loader
	wf           *Workflow
	r            ref
	p            Pos
	site         Site
	shown, where string
	consequence  string // what a lenient site's warning says will happen
}

func (c *refCheck) bad(format string, args ...any) {
	if c.site.Lenient {
		c.l.warnAt(c.p, "%s: %s: %s: %s", c.where, c.shown, fmt.Sprintf(format, args...), c.consequence)
		return
	}
	c.l.errAt(c.p, "%s: %s: %s", c.where, c.shown, fmt.Sprintf(format, args...))
}

// prop checks the reference's next property against the allowed ones.
func (c *refCheck) prop(allowed []string, what string) bool {
	if len(c.r.path) == 0 {
		return true
	}
	name := c.r.path[0]
	if contains(allowed, name) {
		return true
	}
	if right, ok := lowercaseProps[strings.ToLower(name)]; ok && contains(allowed, right) {
		c.bad("%s has no property %q; use %q (AWF's names are case-sensitive)", what, name, right)
		return false
	}
	c.bad("%s has no property %q (one of %s)%s", what, name, strings.Join(allowed, ", "), didYouMean(name, allowed))
	return false
}

// state checks a .states reference: the state exists, the property is
// one of a state's, and the state can have run before the one reading it.
func (c *refCheck) state(isExpr bool) {
	r, wf, site := c.r, c.wf, c.site
	if len(r.path) == 0 {
		return
	}
	name := r.path[0]
	if _, ok := wf.States[name]; !ok {
		if isExpr {
			// a condition that reads a state that has not run is false
			c.consequence = "the condition is always false"
		}
		c.bad("unknown state %q%s", name, didYouMean(name, wf.Order))
		return
	}
	if len(r.path) > 1 {
		c.r.path = r.path[1:]
		if !c.prop(StateProps, "a state") {
			return
		}
	}
	if site.State == nil || site.AnyOrder {
		return
	}
	self := site.State.Name
	switch {
	case name == self && !site.SelfOK:
		c.bad("a state cannot read its own result before it has run")
	case name != self && !c.l.precedes(wf, name, self):
		if c.l.siblingBranches(wf, name, self) {
			c.l.warnAt(c.p, "%s: %s: parallel branches %q and %q run at the same time; %q may not have finished", c.where, c.shown, self, name, name)
			return
		}
		c.bad("state %q cannot have run before %q", name, self)
	}
}

// loop checks a .loop reference: .loop.Parent.Parent.Item: Parent leads
// to another loop's properties; after any other property the keys are the
// value's.
func (c *refCheck) loop() {
	site := c.site
	if site.State != nil && !site.LoopScope && !c.l.inLoop(c.wf, site.State.Name) {
		// AWF's validate accepts this and its run fails; reel warns
		// (the verdict stays AWF's) and the run fails as clearly.
		c.l.warnAt(c.p, "%s: %s: .loop is only set in the body of a for_each or while loop, and %q is in none: this fails when the state runs", c.where, c.shown, site.State.Name)
		return
	}
	for i, k := range c.r.path {
		if !contains(LoopProps, k) {
			c.r.path = c.r.path[i:]
			c.prop(LoopProps, ".loop")
			return
		}
		if k != "Parent" {
			return
		}
	}
}

// flowGraph is the order in which states can run: an edge from the end of
// one state to the start of another, so that "X can have finished before
// Y starts" is reachability from end(X) to start(Y).
type flowGraph struct {
	edges map[flowNode][]flowNode
	reach map[string]map[string]bool // end(X) -> states whose start it reaches
}

type flowNode struct {
	state string
	end   bool
}

func buildFlowGraph(wf *Workflow) *flowGraph {
	g := &flowGraph{edges: map[flowNode][]flowNode{}, reach: map[string]map[string]bool{}}
	edge := func(from, to flowNode) { g.edges[from] = append(g.edges[from], to) }
	start := func(s string) flowNode { return flowNode{s, false} }
	end := func(s string) flowNode { return flowNode{s, true} }
	for _, name := range wf.Order {
		s := wf.States[name]
		for _, n := range []string{s.OnSuccess, s.OnComplete} {
			if n != "" {
				edge(end(name), start(n))
			}
		}
		if s.OnFailure != nil && !s.OnFailure.Inline && s.OnFailure.State != "" {
			edge(end(name), start(s.OnFailure.State))
		}
		for _, t := range s.Transitions {
			if t.Goto != "" {
				edge(end(name), start(t.Goto))
			}
		}
		switch {
		case len(s.Body) > 0:
			edge(start(name), end(name))
			edge(start(name), start(s.Body[0]))
			for i, b := range s.Body {
				edge(end(b), end(name))
				edge(end(b), start(s.Body[(i+1)%len(s.Body)]))
			}
			// a body state that leads outside the body ends the loop
			// there: the loop has finished when its target starts
			inBody := bodyClosure(wf, name)
			for b := range inBody {
				bs := wf.States[b]
				if bs == nil {
					continue // an unknown body state, reported elsewhere
				}
				for _, tgt := range bs.Successors() {
					if tgt != name && !inBody[tgt] && wf.States[tgt] != nil {
						edge(end(name), start(tgt))
					}
				}
			}
		case len(s.Parallel) > 0:
			for _, b := range s.Parallel {
				edge(start(name), start(b))
				edge(end(b), end(name))
			}
		default:
			edge(start(name), end(name))
		}
	}
	return g
}

// bodyClosure is the set of states that run inside loop's body: its body,
// and the bodies and branches of the states there, at any depth.
func bodyClosure(wf *Workflow, loop string) map[string]bool {
	in := map[string]bool{}
	var mark func(n string)
	mark = func(n string) {
		if in[n] || n == loop {
			return
		}
		in[n] = true
		if s := wf.States[n]; s != nil {
			for _, c := range append(append([]string{}, s.Body...), s.Parallel...) {
				mark(c)
			}
		}
	}
	for _, b := range wf.States[loop].Body {
		mark(b)
	}
	return in
}

// precedes reports whether state x can have finished before state y
// starts on some run.
func (l *loader) precedes(wf *Workflow, x, y string) bool {
	if l.flow == nil {
		l.flow = buildFlowGraph(wf)
	}
	g := l.flow
	r, ok := g.reach[x]
	if !ok {
		r = map[string]bool{}
		seen := map[flowNode]bool{}
		queue := []flowNode{{x, true}}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			for _, m := range g.edges[n] {
				if !seen[m] {
					seen[m] = true
					if !m.end {
						r[m.state] = true
					}
					queue = append(queue, m)
				}
			}
		}
		g.reach[x] = r
	}
	return r[y]
}

// siblingBranches reports whether a and b are branches of one parallel
// state.
func (l *loader) siblingBranches(wf *Workflow, a, b string) bool {
	for _, name := range wf.Order {
		p := wf.States[name].Parallel
		if slices.Contains(p, a) && slices.Contains(p, b) {
			return true
		}
	}
	return false
}

// inLoop reports whether state name runs inside a loop body: listed in a
// body, or a branch of a parallel state that does.
func (l *loader) inLoop(wf *Workflow, name string) bool {
	if l.loopStates == nil {
		l.loopStates = map[string]bool{}
		var mark func(n string)
		mark = func(n string) {
			if l.loopStates[n] {
				return
			}
			l.loopStates[n] = true
			if s := wf.States[n]; s != nil {
				for _, b := range s.Parallel {
					mark(b)
				}
				for _, b := range s.Body {
					mark(b)
				}
			}
		}
		for _, n := range wf.Order {
			for _, b := range wf.States[n].Body {
				mark(b)
			}
		}
	}
	return l.loopStates[name]
}
