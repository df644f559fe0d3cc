package workflow

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// Expr is a compiled expr-lang expression (when, while, break_when, output
// from). Its variables are inputs, states, env and loop.
type Expr struct {
	Source string
	Pos    Pos
	prog   *vm.Program
}

// exprEnv declares the top-level variables so that compile catches a
// misspelled one; the maps' contents are dynamic.
var exprEnvShape = map[string]any{
	"inputs": map[string]any{},
	"states": map[string]any{},
	"env":    map[string]any{},
	"loop":   map[string]any{},
}

func compileExpr(src string, asBool bool) (*vm.Program, error) {
	opts := []expr.Option{expr.Env(exprEnvShape)}
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	return expr.Compile(src, opts...)
}

// Eval runs the expression against env (a map with the keys inputs, states,
// env and loop) and returns its value.
func (e *Expr) Eval(env map[string]any) (any, error) {
	if e.prog == nil {
		return nil, fmt.Errorf("expression %q was not compiled", e.Source)
	}
	v, err := expr.Run(e.prog, env)
	if err != nil {
		return nil, fmt.Errorf("evaluate %q: %w", e.Source, err)
	}
	return v, nil
}

// True runs a boolean expression.
func (e *Expr) True(env map[string]any) (bool, error) {
	v, err := e.Eval(env)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("expression %q gave %T, want bool", e.Source, v)
	}
	return b, nil
}

// Template is a parsed Go text/template found in a workflow field.
type Template struct {
	Source string
	Pos    Pos
	tmpl   *template.Template
}

// Execute renders the template against data. A missing map key renders as
// the empty string rather than "<no value>", so an unset optional input does
// not leak Go's placeholder into a shell command.
func (t *Template) Execute(data map[string]any) (string, error) {
	if t == nil {
		return "", nil
	}
	if t.tmpl == nil {
		return t.Source, nil
	}
	var b strings.Builder
	if err := t.tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("template %q: %w", t.Source, err)
	}
	return strings.ReplaceAll(b.String(), "<no value>", ""), nil
}

// templateFuncs are available in every template.
var templateFuncs = template.FuncMap{
	"trim":  strings.TrimSpace,
	"upper": strings.ToUpper,
	"lower": strings.ToLower,
	"split": func(s, sep string) []string { return strings.Split(s, sep) },
	"join": func(v []any, sep string) string {
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, sep)
	},
	"replace": func(s, old, new string) string { return strings.ReplaceAll(s, old, new) },
	"toJSON": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"default": func(def, v any) any {
		if v == nil || v == "" {
			return def
		}
		return v
	},
}

// ParseTemplate parses src as a workflow template (for text read at run
// time, such as a script_file).
func ParseTemplate(src string) (*Template, error) { return parseTemplate(src, Pos{}) }

// parseTemplate parses src. Sources without "{{" are kept as literals.
func parseTemplate(src string, pos Pos) (*Template, error) {
	t := &Template{Source: src, Pos: pos}
	if !strings.Contains(src, "{{") {
		return t, nil
	}
	tmpl, err := template.New("").Funcs(templateFuncs).Option("missingkey=zero").Parse(src)
	if err != nil {
		return nil, err
	}
	t.tmpl = tmpl
	return t, nil
}

// walk calls visit on every node of the template's parse tree, parents
// before children.
func (t *Template) walk(visit func(parse.Node)) {
	if t == nil || t.tmpl == nil || t.tmpl.Tree == nil {
		return
	}
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case nil:
			return
		case *parse.ListNode:
			if n == nil {
				return
			}
			visit(n)
			for _, c := range n.Nodes {
				walk(c)
			}
			return
		case *parse.PipeNode:
			if n == nil {
				return
			}
			visit(n)
			for _, c := range n.Cmds {
				walk(c)
			}
			return
		}
		visit(n)
		switch n := n.(type) {
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.CommandNode:
			for _, c := range n.Args {
				walk(c)
			}
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		}
	}
	walk(t.tmpl.Tree.Root)
}

// stateRefs returns the state names the template reads through
// .states.NAME (and index .states "NAME").
func (t *Template) stateRefs() []string {
	var refs []string
	t.walk(func(n parse.Node) {
		switch n := n.(type) {
		case *parse.CommandNode:
			if len(n.Args) == 3 {
				if id, ok := n.Args[0].(*parse.IdentifierNode); ok && id.Ident == "index" {
					if f, ok := n.Args[1].(*parse.FieldNode); ok && len(f.Ident) == 1 && f.Ident[0] == "states" {
						if s, ok := n.Args[2].(*parse.StringNode); ok {
							refs = append(refs, s.Text)
						}
					}
				}
			}
		case *parse.FieldNode:
			if len(n.Ident) >= 2 && n.Ident[0] == "states" {
				refs = append(refs, n.Ident[1])
			}
		}
	})
	return refs
}

// stateRefs returns the state names the expression reads as states.NAME or
// states["NAME"].
func (e *Expr) stateRefs() []string {
	if e == nil {
		return nil
	}
	tree, err := parser.Parse(e.Source)
	if err != nil {
		return nil
	}
	v := &stateRefVisitor{}
	ast.Walk(&tree.Node, v)
	return v.refs
}

type stateRefVisitor struct{ refs []string }

func (v *stateRefVisitor) Visit(node *ast.Node) {
	m, ok := (*node).(*ast.MemberNode)
	if !ok {
		return
	}
	id, ok := m.Node.(*ast.IdentifierNode)
	if !ok || id.Value != "states" {
		return
	}
	if s, ok := m.Property.(*ast.StringNode); ok {
		v.refs = append(v.refs, s.Value)
	}
}
