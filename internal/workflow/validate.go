package workflow

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

func (l *loader) missingState(n *yaml.Node, what, name string, wf *Workflow) {
	l.missingStateAt(pos(n), what, name, wf)
}

func (l *loader) missingStateAt(p Pos, what, name string, wf *Workflow) {
	msg := fmt.Sprintf("%s: unknown state %q", what, name)
	msg += didYouMean(name, wf.Order)
	l.errAt(p, "%s", msg)
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
		if s.Type == TypeTerminal && s.Message != nil {
			l.checkRefs(wf, s.Message)
		}
		for _, t := range s.templates() {
			l.checkRefs(wf, t)
		}
		l.validateAgent(wf, s)
		for _, e := range []*Expr{s.BreakWhen, s.While} {
			l.checkExprRefs(wf, e)
		}
		for _, t := range s.Transitions {
			l.checkExprRefs(wf, t.When)
		}
		if c := s.Call; c != nil && c.Workflow != "" && l.opts.ProjectDir != "" && wf.File != "" && !strings.Contains(c.Workflow, "{{") {
			if _, err := Find(c.Workflow, filepath.Dir(wf.File), l.opts.ProjectDir); err != nil {
				l.errAt(s.Pos, "state %q: call_workflow: %v", s.Name, err)
			}
		}
		l.checkFiles(wf, s)
	}
	for _, o := range wf.Outputs {
		l.checkExprRefs(wf, o.From)
	}
	l.checkHooks(wf)
	l.reachability(wf)
}

func (l *loader) checkExprRefs(wf *Workflow, e *Expr) {
	for _, ref := range e.stateRefs() {
		if _, ok := wf.States[ref]; !ok {
			msg := fmt.Sprintf("expression refers to unknown state %q", ref)
			msg += didYouMean(ref, wf.Order)
			l.errAt(e.Pos, "%s", msg)
		}
	}
}

func (l *loader) checkRefs(wf *Workflow, t *Template) {
	if t == nil {
		return
	}
	for _, ref := range t.stateRefs() {
		if _, ok := wf.States[ref]; !ok {
			msg := fmt.Sprintf("template refers to unknown state %q", ref)
			msg += didYouMean(ref, wf.Order)
			l.errAt(t.Pos, "%s", msg)
		}
	}
}

// templates returns every template of s except the terminal message.
func (s *State) templates() []*Template {
	out := []*Template{s.Command, s.Dir, s.Prompt, s.SystemPrompt, s.Items}
	out = append(out, s.Conversation...)
	out = append(out, s.Hooks.templates()...)
	out = append(out, s.agentTemplates()...)
	if s.OnFailure != nil {
		out = append(out, s.OnFailure.Message)
	}
	if s.Call != nil {
		for _, k := range slices.Sorted(maps.Keys(s.Call.Inputs)) {
			out = append(out, s.Call.Inputs[k])
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case *Template:
			out = append(out, v)
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(s.Inputs)
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

// Find resolves a workflow reference: a path to a file (absolute, or
// relative to baseDir), or a name looked up as NAME.yaml / NAME.yml beside
// baseDir and then in projectDir/.reel/workflows and projectDir/.awf/workflows
// (AWF's place for them).
func Find(ref, baseDir, projectDir string) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("%w: empty name", ErrNotFound)
	}
	var candidates []string
	add := func(dir string) {
		p := ref
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, ref)
		}
		candidates = append(candidates, p)
		if ext := filepath.Ext(ref); ext != ".yaml" && ext != ".yml" {
			candidates = append(candidates, p+".yaml", p+".yml")
		}
	}
	add(baseDir)
	if projectDir != "" && !filepath.IsAbs(ref) {
		add(filepath.Join(projectDir, ".reel", "workflows"))
		add(filepath.Join(projectDir, ".awf", "workflows"))
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: %q (looked in %s)", ErrNotFound, ref, strings.Join(candidates, ", "))
}
