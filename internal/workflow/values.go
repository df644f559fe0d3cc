package workflow

import (
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

func (l *loader) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.errf(n, "%s must be a string, got %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

func (l *loader) intv(n *yaml.Node, what string) (int, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		l.errf(n, "%s must be an integer, got %s", what, kindName(n))
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 0, 32)
	if err != nil {
		l.errf(n, "%s: %q is out of range", what, n.Value)
		return 0, false
	}
	return int(v), true
}

func (l *loader) floatv(n *yaml.Node, what string) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		l.errf(n, "%s must be a number, got %s", what, kindName(n))
		return 0, false
	}
	v, err := strconv.ParseFloat(n.Value, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		l.errf(n, "%s: %q is not a finite number", what, n.Value)
		return 0, false
	}
	return v, true
}

func (l *loader) boolv(n *yaml.Node, what string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		l.errf(n, "%s must be true or false, got %s", what, kindName(n))
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		l.errf(n, "%s: %v", what, err)
		return false, false
	}
	return b, true
}

func (l *loader) strList(n *yaml.Node, what string) []string {
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "%s must be a list of names, got %s", what, kindName(n))
		return nil
	}
	var out []string
	for _, c := range n.Content {
		c = deref(c)
		if s, ok := l.str(c, what+" entry"); ok {
			out = append(out, s)
		}
	}
	return out
}

// duration accepts integer seconds or a Go duration string.
func (l *loader) duration(n *yaml.Node, what string) time.Duration {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		l.errf(n, "%s must be integer seconds or a duration such as \"1m30s\", got %s", what, kindName(n))
		return 0
	}
	if n.Tag == "!!int" {
		v, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil || v < 0 || v > math.MaxInt64/int64(time.Second) {
			l.errf(n, "%s: %q is not a valid number of seconds", what, n.Value)
			return 0
		}
		return time.Duration(v) * time.Second
	}
	if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil && v >= 0 && v <= math.MaxInt64/int64(time.Second) {
		return time.Duration(v) * time.Second
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		l.errf(n, "%s: %q is not a duration (use seconds or a Go duration such as \"1m30s\")", what, n.Value)
		return 0
	}
	if d < 0 {
		l.errf(n, "%s: %q is negative", what, n.Value)
		return 0
	}
	return d
}

func (l *loader) template(n *yaml.Node, what string) *Template {
	s, ok := l.str(n, what)
	if !ok {
		return nil
	}
	t, err := l.parseTemplate(s, pos(n))
	if err != nil {
		l.errf(n, "%s: bad template: %v", what, cleanTemplateErr(err))
		return nil
	}
	return t
}

func cleanTemplateErr(err error) string {
	return strings.TrimPrefix(err.Error(), "template: :")
}

func (l *loader) expr(n *yaml.Node, what string, asBool bool) *Expr {
	s, ok := l.str(n, what)
	if !ok {
		return nil
	}
	if strings.TrimSpace(s) == "" {
		l.errf(n, "%s is empty", what)
		return nil
	}
	prog, err := compileExpr(s, asBool)
	if err != nil {
		l.errf(n, "%s: bad expression: %s", what, firstLine(err.Error()))
		return nil
	}
	return &Expr{Source: s, Pos: pos(n), prog: prog}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// value converts a node to plain Go values; with templates, string leaves
// become *Template.
func (l *loader) value(n *yaml.Node, what string, templates bool) any {
	return l.valueDepth(n, what, templates, 0)
}

// Bounds on free-form values, so that a recursive alias or an alias bomb
// gives a problem instead of a hang.
const (
	maxValueDepth = 64
	maxValueNodes = 100000
)

func (l *loader) valueDepth(n *yaml.Node, what string, templates bool, depth int) any {
	// Count first: an alias bomb deeper than the depth limit would
	// otherwise report one problem per leaf, without bound.
	l.nodes++
	if l.nodes > maxValueNodes {
		if l.nodes == maxValueNodes+1 {
			l.errf(n, "%s expands to more than %d values (aliases?)", what, maxValueNodes)
		}
		return nil
	}
	if depth > maxValueDepth {
		if !l.tooDeep {
			l.tooDeep = true
			l.errf(n, "%s is nested more than %d levels deep (a recursive alias?)", what, maxValueDepth)
		}
		return nil
	}
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		fs, _ := l.mapping(n, what)
		m := make(map[string]any, len(fs))
		for _, f := range fs {
			m[f.key.Value] = l.valueDepth(f.val, what, templates, depth+1)
		}
		return m
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, l.valueDepth(c, what, templates, depth+1))
		}
		return out
	case yaml.ScalarNode:
		if templates && n.Tag == "!!str" {
			return l.template(n, what)
		}
		var v any
		if err := n.Decode(&v); err != nil {
			l.errf(n, "%s: %v", what, err)
			return nil
		}
		return v
	}
	return nil
}

// list calls item for each mapping in the sequence n (the "what" field),
// reporting n if it is not a list and any element that is not a mapping.
func (l *loader) list(n *yaml.Node, what, itemName string, item func(c *yaml.Node, fs []field)) {
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "%s must be a list, got %s", what, kindName(n))
		return
	}
	for _, c := range n.Content {
		c = deref(c)
		if fs, ok := l.mapping(c, itemName); ok {
			item(c, fs)
		}
	}
}
