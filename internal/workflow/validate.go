package workflow

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/reelhq/reel/internal/errcode"
)

func (l *loader) missingState(n *yaml.Node, what, name string, wf *Workflow) {
	l.missingStateAt(pos(n), what, name, wf)
}

func (l *loader) missingStateAt(p Pos, what, name string, wf *Workflow) {
	msg := fmt.Sprintf("%s: unknown state %q", what, name)
	msg += didYouMean(name, wf.Order)
	l.probs = append(l.probs, Problem{File: l.file, Pos: p, Msg: msg, Code: errcode.WorkflowValidationMissingState})
}

// validate checks what needs the whole file: targets, reachability and the
// states templates refer to.
func (l *loader) validate(wf *Workflow) {
	check := func(s *State, what, target string) {
		if target == "" {
			return
		}
		if _, ok := wf.States[target]; !ok {
			l.missingStateAt(s.Pos, fmt.Sprintf("state %q %s", s.Name, what), target, wf)
		}
	}
	for _, name := range wf.Order {
		s := wf.States[name]
		check(s, "on_success", s.OnSuccess)
		check(s, "on_complete", s.OnComplete)
		if s.OnFailure != nil && !s.OnFailure.Inline {
			check(s, "on_failure", s.OnFailure.State)
		}
		for _, t := range s.Transitions {
			if t.Goto != "" {
				if _, ok := wf.States[t.Goto]; !ok {
					l.missingStateAt(t.Pos, fmt.Sprintf("state %q transition goto", s.Name), t.Goto, wf)
				}
			}
		}
		for _, c := range s.Parallel {
			check(s, "parallel branch", c)
			if c == s.Name {
				l.errAt(s.Pos, "parallel state %q lists itself as a branch", s.Name)
			}
		}
		for _, c := range s.Body {
			check(s, "body", c)
			if c == s.Name {
				l.errAt(s.Pos, "loop %q lists itself in its body", s.Name)
			}
		}
		l.validateAgent(wf, s)
		for _, c := range s.DependsOn {
			if _, ok := wf.States[c]; !ok {
				l.warnAt(s.Pos, "state %q depends_on: unknown state %q%s (depends_on orders nothing, in AWF or reel)", s.Name, c, didYouMean(c, wf.Order))
			}
		}
		l.checkStateRefs(wf, s)
		if c := s.Call; c != nil && c.Workflow != "" && l.opts.FindWorkflow != nil && !strings.Contains(c.Workflow, "{{") {
			if _, err := l.opts.FindWorkflow(c.Workflow, wf); err != nil {
				l.errAt(s.Pos, "state %q: call_workflow: %v", s.Name, err)
			}
		}
		l.checkFiles(wf, s)
	}
	for _, o := range wf.Outputs {
		l.checkExpr(wf, o.From, Site{What: fmt.Sprintf("output %q", o.Name), AnyOrder: true, Lenient: true})
	}
	l.checkHooks(wf)
	l.reachability(wf)
}

// checkStateRefs checks the references of every template and expression
// of s.
func (l *loader) checkStateRefs(wf *Workflow, s *State) {
	for _, ts := range s.templateSites() {
		l.checkTemplate(wf, ts.t, ts.site)
	}
	// while and break_when are evaluated in each iteration, with the
	// iteration's .loop
	l.checkExpr(wf, s.While, Site{State: s, What: "while", AnyOrder: true, LoopScope: true, Lenient: true})
	l.checkExpr(wf, s.BreakWhen, Site{State: s, What: "break_when", AnyOrder: true, LoopScope: true, Lenient: true})
	for _, t := range s.Transitions {
		l.checkExpr(wf, t.When, Site{State: s, What: "transition", SelfOK: true, Lenient: true})
	}
}

type templateSite struct {
	t    *Template
	site Site
}

// templateSites lists every template of s with where it is read. A field
// a new feature adds belongs here, so that its references are checked.
func (s *State) templateSites() []templateSite {
	var out []templateSite
	add := func(t *Template, what string, selfOK, lenient bool) {
		if t != nil {
			out = append(out, templateSite{t, Site{State: s, What: what, SelfOK: selfOK, Lenient: lenient}})
		}
	}
	// strict: the fields AWF's validate checks (see Site.Lenient)
	add(s.Command, "command", false, false)
	add(s.Dir, "dir", false, false)
	add(s.Items, "items", false, false)
	add(s.MaxIterationsExpr, "max_iterations", false, false)
	if h := s.Hooks; h != nil {
		for _, a := range h.Pre {
			add(a.template(), "hooks.pre", false, false)
		}
		for _, a := range h.Post {
			add(a.template(), "hooks.post", true, false)
		}
	}
	add(s.Prompt, "prompt", false, true)
	add(s.SystemPrompt, "system_prompt", false, true)
	for i, c := range s.Conversation {
		add(c, fmt.Sprintf("conversation[%d]", i), false, true)
	}
	for _, t := range s.agentTemplates() {
		add(t, "agent field", false, true)
	}
	add(s.Message, "message", false, true)
	if s.OnFailure != nil {
		add(s.OnFailure.Message, "on_failure message", true, true)
	}
	if s.Call != nil {
		for _, k := range slices.Sorted(maps.Keys(s.Call.Inputs)) {
			add(s.Call.Inputs[k], "inputs."+k, false, true)
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case *Template:
			add(v, path, false, true)
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(path+"."+k, v[k])
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	walk("inputs", s.Inputs)
	return out
}

// Successors lists the states s can hand control to or runs as children.
func (s *State) Successors() []string {
	var out []string
	add := func(n string) {
		if n != "" {
			out = append(out, n)
		}
	}
	add(s.OnSuccess)
	add(s.OnComplete)
	if s.OnFailure != nil && !s.OnFailure.Inline {
		add(s.OnFailure.State)
	}
	for _, t := range s.Transitions {
		add(t.Goto)
	}
	for _, c := range s.Parallel {
		add(c)
	}
	for _, c := range s.Body {
		add(c)
	}
	return out
}

func (l *loader) reachability(wf *Workflow) {
	if _, ok := wf.States[wf.Initial]; !ok {
		return
	}
	seen := map[string]bool{wf.Initial: true}
	queue := []string{wf.Initial}
	for len(queue) > 0 {
		s := wf.States[queue[0]]
		queue = queue[1:]
		if s == nil {
			continue
		}
		for _, n := range s.Successors() {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	for _, name := range wf.Order {
		if !seen[name] {
			l.errAt(wf.States[name].Pos, "state %q is unreachable from the initial state %q", name, wf.Initial)
		}
	}
}
