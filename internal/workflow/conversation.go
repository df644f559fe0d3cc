package workflow

import (
	"fmt"
	"strings"
	"text/template/parse"

	"gopkg.in/yaml.v3"
)

// conversation reads an agent state's follow-up prompts: a non-empty list
// of non-empty template strings. A mapping form (per-turn options) is
// refused on purpose: a turn continues the step's provider session, so
// there is nothing a turn could set that the step does not already.
func (l *loader) conversation(n *yaml.Node) []*Template {
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "conversation must be a list of follow-up prompts (strings), got %s", kindName(n))
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
