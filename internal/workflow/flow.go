package workflow

import (
	"gopkg.in/yaml.v3"
)

// maxRetryAttempts bounds retry.max_attempts (AWF sets no bound; a
// number past this is a typo, not a plan).
const maxRetryAttempts = 10000

var retryFields = []string{"max_attempts", "initial_delay", "max_delay", "backoff", "multiplier", "jitter", "retryable_exit_codes"}

func (l *loader) retry(n *yaml.Node) *Retry {
	fs, ok := l.mapping(n, "retry")
	if !ok {
		return nil
	}
	r := &Retry{MaxAttempts: 1, Backoff: "constant", Multiplier: 2}
	for _, f := range fs {
		v := f.val
		switch f.key.Value {
		case "max_attempts":
			if x, ok := l.intv(v, "max_attempts"); ok {
				if x < 1 || x > maxRetryAttempts {
					l.errf(v, "max_attempts must be between 1 and %d, got %d", maxRetryAttempts, x)
				}
				r.MaxAttempts = x
			}
		case "initial_delay":
			r.InitialDelay = l.duration(v, "initial_delay")
		case "max_delay":
			r.MaxDelay = l.duration(v, "max_delay")
		case "backoff":
			if b, ok := l.str(v, "backoff"); ok {
				l.oneOf(v, "backoff", b, []string{"constant", "linear", "exponential"})
				r.Backoff = b
			}
		case "multiplier":
			if x, ok := l.floatv(v, "multiplier"); ok {
				if x < 0 {
					l.errf(v, "multiplier must not be negative, got %v", x)
				}
				r.Multiplier = x
			}
		case "jitter":
			if x, ok := l.floatv(v, "jitter"); ok {
				if x < 0 || x > 1 {
					l.errf(v, "jitter must be between 0 and 1, got %v", x)
				}
				r.Jitter = x
			}
		case "retryable_exit_codes":
			if v.Kind != yaml.SequenceNode {
				l.errf(v, "retryable_exit_codes must be a list of integers, got %s", kindName(v))
				continue
			}
			for _, c := range v.Content {
				if x, ok := l.intv(deref(c), "retryable_exit_codes entry"); ok {
					r.RetryableExitCodes = append(r.RetryableExitCodes, x)
				}
			}
		default:
			l.unknownField(f.key, "retry", retryFields, "")
		}
	}
	return r
}

func (l *loader) onFailure(n *yaml.Node) *FailureTarget {
	if n.Kind == yaml.ScalarNode {
		s, ok := l.str(n, "on_failure")
		if !ok {
			return nil
		}
		return &FailureTarget{State: s}
	}
	fs, ok := l.mapping(n, "on_failure")
	if !ok {
		return nil
	}
	ft := &FailureTarget{Inline: true}
	for _, f := range fs {
		switch f.key.Value {
		case "message":
			ft.Message = l.template(f.val, "on_failure message")
		case "status":
			if x, ok := l.intv(f.val, "on_failure status"); ok {
				if x < 1 || x > 255 {
					l.errf(f.val, "on_failure status must be an exit status between 1 and 255, got %d", x)
				}
				ft.Status = x
			}
		default:
			l.unknownField(f.key, "on_failure", []string{"message", "status"}, "")
		}
	}
	return ft
}

func (l *loader) transitions(n *yaml.Node) []Transition {
	var out []Transition
	l.list(n, "transitions", "transition", func(c *yaml.Node, fs []field) {
		t := Transition{Pos: pos(c)}
		for _, f := range fs {
			switch f.key.Value {
			case "when":
				// An empty or null when is AWF's default branch: it
				// always matches, like a transition without when.
				if f.val.Kind != yaml.ScalarNode || (f.val.Value != "" && f.val.Tag != "!!null") {
					t.When = l.expr(f.val, "when", true)
				}
			case "goto":
				t.Goto, _ = l.str(f.val, "goto")
				t.Pos = pos(f.val)
			default:
				l.unknownField(f.key, "a transition", []string{"when", "goto"}, "")
			}
		}
		if t.Goto == "" {
			l.errf(c, "transition is missing goto")
		}
		out = append(out, t)
	})
	return out
}

func (l *loader) callWorkflow(s *State, n *yaml.Node) {
	fs, ok := l.mapping(n, "call_workflow")
	if !ok {
		return
	}
	c := s.call()
	for _, f := range fs {
		switch f.key.Value {
		case "workflow":
			c.Workflow, _ = l.str(f.val, "workflow")
		case "inputs":
			c.Inputs = l.callInputs(f.val)
		case "outputs":
			c.Outputs = l.callOutputs(f.val)
		case "timeout":
			c.Timeout = l.duration(f.val, "timeout")
		default:
			l.unknownField(f.key, "call_workflow", []string{"workflow", "inputs", "outputs", "timeout"}, "")
		}
	}
}

func (l *loader) callInputs(n *yaml.Node) map[string]*Template {
	fs, ok := l.mapping(n, "inputs")
	if !ok {
		return nil
	}
	m := make(map[string]*Template, len(fs))
	for _, f := range fs {
		v := f.val
		if v.Kind == yaml.ScalarNode && v.Tag != "!!str" && !isNull(v) {
			// numbers and booleans are passed as their text
			m[f.key.Value] = &Template{Source: v.Value, Pos: pos(v)}
			continue
		}
		m[f.key.Value] = l.template(v, "inputs."+f.key.Value)
	}
	return m
}

// callOutputs accepts a mapping {local: child_output} or a list of names
// (each mapped to itself).
func (l *loader) callOutputs(n *yaml.Node) map[string]string {
	m := map[string]string{}
	if n.Kind == yaml.SequenceNode {
		for _, name := range l.strList(n, "outputs") {
			m[name] = name
		}
		return m
	}
	fs, ok := l.mapping(n, "outputs")
	if !ok {
		return nil
	}
	for _, f := range fs {
		if s, ok := l.str(f.val, "outputs."+f.key.Value); ok {
			m[f.key.Value] = s
		}
	}
	return m
}
