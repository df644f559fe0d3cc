package workflow

import (
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"text/template/parse"
)

// Template is a parsed Go text/template found in a workflow field.
//
// A template reads the namespaces of namespace.go with a dot
// ({{.inputs.x}}) or without one ({{inputs.x}}, the form AWF registers as
// functions); the loader rewrites the second form into {{$.inputs.x}} at
// parse time, so both read the same data and mean the same inside range
// and with. A key that is not in the data is an error when the template
// runs, never an empty string: the loader refuses the references it can
// prove wrong, and what only the run can know (a state that has not run
// yet, an unset environment variable) fails the step with a message that
// names it.
type Template struct {
	Source string
	Pos    Pos
	tmpl   *template.Template
}

// Execute renders the template against data, a map whose keys are the
// namespaces. A nil value in the data (a step output that is not JSON, an
// absent result) renders as the empty string.
func (t *Template) Execute(data map[string]any) (string, error) {
	if t == nil {
		return "", nil
	}
	if t.tmpl == nil {
		return t.Source, nil
	}
	var b strings.Builder
	if err := t.tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("template %q: %s", truncate(t.Source, 80), execMessage(err))
	}
	return strings.ReplaceAll(b.String(), "<no value>", ""), nil
}

var (
	execAtRE    = regexp.MustCompile(`^template: [^ ]*: executing "[^"]*" at <([^>]*)>: `)
	noEntryRE   = regexp.MustCompile(`^map has no entry for key "([^"]*)"$`)
	execPrefixR = regexp.MustCompile(`^template: [^ ]*: `)
)

// execMessage turns a text/template execution error into a sentence that
// names the reference (in its dotted form) and, for a missing key, why it
// has no value.
func execMessage(err error) string {
	msg := err.Error()
	m := execAtRE.FindStringSubmatch(msg)
	if m == nil {
		return execPrefixR.ReplaceAllString(msg, "")
	}
	ref := strings.TrimPrefix(m[1], "$")
	if !strings.HasPrefix(ref, ".") && ref != "" && !strings.ContainsAny(ref, " (") {
		ref = "." + ref
	}
	rest := msg[len(m[0]):]
	k := noEntryRE.FindStringSubmatch(rest)
	if k == nil {
		return ref + ": " + rest
	}
	parts := strings.Split(strings.TrimPrefix(ref, "."), ".")
	switch {
	case len(parts) >= 2 && parts[0] == NSStates && parts[1] == k[1]:
		return fmt.Sprintf("%s: state %q has not run yet", ref, k[1])
	case len(parts) >= 2 && parts[0] == NSEnv && parts[1] == k[1]:
		return fmt.Sprintf("%s: environment variable %s is not set", ref, k[1])
	case len(parts) >= 2 && parts[0] == NSInputs && parts[1] == k[1]:
		return fmt.Sprintf("%s: no input %q", ref, k[1])
	case len(parts) >= 1 && parts[0] == k[1] && k[1] == NSLoop:
		return ref + ": not inside a loop"
	case len(parts) >= 1 && parts[0] == k[1] && k[1] == NSError:
		return ref + ": only an error hook has .error"
	}
	return fmt.Sprintf("%s: no value for %q", ref, k[1])
}

// ParseTemplate parses src as a workflow template (for text read at run
// time, such as a script_file).
func ParseTemplate(src string) (*Template, error) { return parseTemplate(nil, src, Pos{}) }

// newTemplateBase returns a template whose New gives templates with the
// workflow functions and options. Templates made from one base share their
// function tables (text/template's common part), so a file of thousands
// of templates does not copy them thousands of times; each keeps its own
// tree.
func newTemplateBase() *template.Template {
	return template.New("").Funcs(templateFuncs).Funcs(namespaceFuncs).Option("missingkey=error")
}

// parseTemplate parses src with the loader's template base.
func (l *loader) parseTemplate(src string, pos Pos) (*Template, error) {
	if l.tmplBase == nil {
		l.tmplBase = newTemplateBase()
	}
	return parseTemplate(l.tmplBase, src, pos)
}

// namespaceFuncs declare the namespaces as functions so that the dot-less
// form parses; rewriteNamespaces replaces every use before a template
// runs, so they are never called.
var namespaceFuncs = func() template.FuncMap {
	m := template.FuncMap{}
	for _, ns := range Namespaces {
		m[ns] = func() (any, error) { return nil, fmt.Errorf("%s is a namespace, not a function", ns) }
	}
	return m
}()

// parseTemplate parses src as a template of base (a fresh base when nil).
// Sources without "{{" are kept as literals.
func parseTemplate(base *template.Template, src string, pos Pos) (*Template, error) {
	t := &Template{Source: src, Pos: pos}
	if !strings.Contains(src, "{{") {
		return t, nil
	}
	if base == nil {
		base = newTemplateBase()
	}
	tmpl, err := base.New("").Parse(src)
	if err != nil {
		return nil, err
	}
	if err := rewriteNamespaces(tmpl.Tree.Root); err != nil {
		return nil, err
	}
	t.tmpl = tmpl
	return t, nil
}

var isNamespace = func() map[string]bool {
	m := map[string]bool{}
	for _, ns := range Namespaces {
		m[ns] = true
	}
	return m
}()

// rewriteNamespaces turns every dot-less namespace reference below n
// (inputs.x, a bare inputs) into the variable $.inputs.x, which reads the
// root data wherever dot points.
func rewriteNamespaces(n parse.Node) error {
	var err error
	var pipe func(p *parse.PipeNode)
	var node func(n parse.Node)
	rewrite := func(a parse.Node, fn bool) parse.Node {
		switch a := a.(type) {
		case *parse.IdentifierNode:
			if isNamespace[a.Ident] {
				if fn && err == nil {
					err = fmt.Errorf("%s is a namespace, not a function: write {{%s.NAME}}", a.Ident, a.Ident)
				}
				return &parse.VariableNode{NodeType: parse.NodeVariable, Pos: a.Pos, Ident: []string{"$", a.Ident}}
			}
		case *parse.ChainNode:
			if id, ok := a.Node.(*parse.IdentifierNode); ok && isNamespace[id.Ident] {
				return &parse.VariableNode{NodeType: parse.NodeVariable, Pos: a.Pos, Ident: append([]string{"$", id.Ident}, a.Field...)}
			}
			node(a.Node)
		case *parse.PipeNode:
			pipe(a)
		}
		return a
	}
	pipe = func(p *parse.PipeNode) {
		if p == nil {
			return
		}
		for _, c := range p.Cmds {
			for i, a := range c.Args {
				c.Args[i] = rewrite(a, i == 0 && len(c.Args) > 1)
			}
		}
	}
	node = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				node(c)
			}
		case *parse.ActionNode:
			pipe(n.Pipe)
		case *parse.IfNode:
			pipe(n.Pipe)
			node(n.List)
			node(n.ElseList)
		case *parse.RangeNode:
			pipe(n.Pipe)
			node(n.List)
			node(n.ElseList)
		case *parse.WithNode:
			pipe(n.Pipe)
			node(n.List)
			node(n.ElseList)
		case *parse.TemplateNode:
			pipe(n.Pipe)
		case *parse.PipeNode:
			pipe(n)
		}
	}
	node(n)
	return err
}

// walk calls visit on every node of the template's parse tree, parents
// before children.
func (t *Template) walk(visit func(parse.Node)) {
	t.walkDot(func(n parse.Node, _ bool) { visit(n) })
}

// walkDot is walk that also says whether dot is still the root data at
// each node (false inside the body of range and with, where dot is the
// element).
func (t *Template) walkDot(visit func(n parse.Node, rootDot bool)) {
	if t == nil || t.tmpl == nil || t.tmpl.Tree == nil {
		return
	}
	var walk func(n parse.Node, root bool)
	walk = func(n parse.Node, root bool) {
		switch n := n.(type) {
		case nil:
			return
		case *parse.ListNode:
			if n == nil {
				return
			}
			visit(n, root)
			for _, c := range n.Nodes {
				walk(c, root)
			}
			return
		case *parse.PipeNode:
			if n == nil {
				return
			}
			visit(n, root)
			for _, c := range n.Cmds {
				walk(c, root)
			}
			return
		}
		visit(n, root)
		switch n := n.(type) {
		case *parse.ActionNode:
			walk(n.Pipe, root)
		case *parse.CommandNode:
			for _, c := range n.Args {
				walk(c, root)
			}
		case *parse.ChainNode:
			walk(n.Node, root)
		case *parse.IfNode:
			walk(n.Pipe, root)
			walk(n.List, root)
			walk(n.ElseList, root)
		case *parse.RangeNode:
			walk(n.Pipe, root)
			walk(n.List, false)
			walk(n.ElseList, root)
		case *parse.WithNode:
			walk(n.Pipe, root)
			walk(n.List, false)
			walk(n.ElseList, root)
		case *parse.TemplateNode:
			walk(n.Pipe, root)
		}
	}
	walk(t.tmpl.Tree.Root, true)
}
