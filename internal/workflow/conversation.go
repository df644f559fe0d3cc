package workflow

import (
	"fmt"
	"strings"
	"text/template/parse"

	"gopkg.in/yaml.v3"
)

// conversation reads an agent state's conversation: reel's list of
// follow-up prompts (non-empty template strings), or AWF's mapping
// (session tracking, continue_from and mode conversation's settings),
// which goes to s.Agent.
func (l *loader) conversation(s *State, n *yaml.Node) []*Template {
	if n.Kind == yaml.MappingNode {
		l.conversationMapping(s, n)
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "conversation must be a list of follow-up prompts (strings) or a mapping (continue_from, max_turns, stop_condition, inject_context), got %s", kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		l.errf(n, "conversation lists no follow-up prompts (remove it for a single-turn step)")
		return nil
	}
	out := make([]*Template, 0, len(n.Content))
	for i, c := range n.Content {
		c = deref(c)
		what := fmt.Sprintf("conversation[%d]", i)
		if c.Kind != yaml.ScalarNode || c.Tag != "!!str" {
			l.errf(c, "%s must be a prompt string, got %s", what, kindName(c))
			continue
		}
		if strings.TrimSpace(c.Value) == "" {
			l.errf(c, "%s is an empty prompt", what)
			continue
		}
		if t := l.template(c, what); t != nil {
			out = append(out, t)
		}
	}
	return out
}

// usesTurn reports whether t reads .turn (or $.turn), which only a
// conversation follow-up has; elsewhere it would silently render empty.
func usesTurn(t *Template) bool {
	found := false
	t.walk(func(n parse.Node) {
		switch n := n.(type) {
		case *parse.FieldNode:
			found = found || len(n.Ident) > 0 && n.Ident[0] == "turn"
		case *parse.VariableNode:
			found = found || len(n.Ident) > 1 && n.Ident[0] == "$" && n.Ident[1] == "turn"
		}
	})
	return found
}
