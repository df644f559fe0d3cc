package workflow

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// Expr is a compiled expr-lang expression (when, while, break_when,
// transitions, output from). Its variables are the namespaces of
// namespace.go, read without a dot (states.build.ExitCode); has_prefix
// and has_suffix are functions, as in AWF, besides expr-lang's own.
type Expr struct {
	Source string
	Pos    Pos
	prog   *vm.Program
}

// exprEnvShape declares the top-level variables so that compile catches a
// misspelled one; the maps' contents are dynamic.
var exprEnvShape = func() map[string]any {
	m := map[string]any{"has_prefix": strings.HasPrefix, "has_suffix": strings.HasSuffix}
	for _, ns := range Namespaces {
		m[ns] = map[string]any{}
	}
	return m
}()

// containsCallRE finds AWF's contains(a, b) spelling, which AWF rewrites
// to expr-lang's infix operator before compiling; reel does the same.
var containsCallRE = regexp.MustCompile(`contains\(([^,]+),\s*([^)]+)\)`)

func exprSource(src string) string { return containsCallRE.ReplaceAllString(src, `$1 contains $2`) }

func compileExpr(src string, asBool bool) (*vm.Program, error) {
	opts := []expr.Option{expr.Env(exprEnvShape)}
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	return expr.Compile(exprSource(src), opts...)
}

// Eval runs the expression against env (a map keyed by namespace) and
// returns its value.
func (e *Expr) Eval(env map[string]any) (any, error) {
	if e.prog == nil {
		return nil, fmt.Errorf("expression %q was not compiled", e.Source)
	}
	if _, ok := env["has_prefix"]; !ok {
		env = withExprFuncs(env)
	}
	v, err := expr.Run(e.prog, env)
	if err != nil {
		return nil, fmt.Errorf("evaluate %q: %w", e.Source, err)
	}
	return v, nil
}

func withExprFuncs(env map[string]any) map[string]any {
	m := make(map[string]any, len(env)+2)
	for k, v := range env {
		m[k] = v
	}
	m["has_prefix"] = strings.HasPrefix
	m["has_suffix"] = strings.HasSuffix
	return m
}

// True runs a boolean expression. As in AWF, a condition that fails because
// it reads a state that has not run yet (absent from env's states) is
// false rather than an error: "while states.check.ExitCode != 0" starts a
// loop whose body has not run, and a transition on a skipped branch's
// output simply does not match.
func (e *Expr) True(env map[string]any) (bool, error) {
	v, err := e.Eval(env)
	if err != nil {
		if e.readsMissingState(env) {
			return false, nil
		}
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("expression %q gave %T, want bool", e.Source, v)
	}
	return b, nil
}

// readsMissingState reports whether e refers to a state that env's states
// do not hold.
func (e *Expr) readsMissingState(env map[string]any) bool {
	states, _ := env[NSStates].(map[string]any)
	for _, name := range stateNames(e.refs()) {
		if _, ok := states[name]; !ok {
			return true
		}
	}
	return false
}

// refs returns the namespace references of the expression: every chain
// of literal member accesses that starts at a namespace (states.build.Output,
// states["build"].Output, loop.Parent.Item).
func (e *Expr) refs() []ref {
	if e == nil {
		return nil
	}
	tree, err := parser.Parse(exprSource(e.Source))
	if err != nil {
		return nil
	}
	v := &refVisitor{inner: map[*ast.MemberNode]bool{}, rooted: map[*ast.IdentifierNode]bool{}}
	ast.Walk(&tree.Node, v)
	var out []ref
	for _, m := range v.members {
		if v.inner[m] {
			continue
		}
		if r, ok := memberChain(m); ok {
			out = append(out, r)
		}
	}
	for _, id := range v.idents {
		if !v.rooted[id] && isNamespace[id.Value] {
			out = append(out, ref{ns: id.Value, text: id.Value})
		}
	}
	return out
}

// refVisitor collects member accesses (and which of them are the object
// of another) and bare identifiers that are not the root of a member.
type refVisitor struct {
	members []*ast.MemberNode
	inner   map[*ast.MemberNode]bool
	rooted  map[*ast.IdentifierNode]bool
	idents  []*ast.IdentifierNode
}

func (v *refVisitor) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.MemberNode:
		v.members = append(v.members, n)
		switch o := n.Node.(type) {
		case *ast.MemberNode:
			v.inner[o] = true
		case *ast.IdentifierNode:
			v.rooted[o] = true
		}
	case *ast.IdentifierNode:
		v.idents = append(v.idents, n)
	}
}

// memberChain follows m down to its root identifier, keeping the literal
// property names; a computed property ends the path there.
func memberChain(m *ast.MemberNode) (ref, bool) {
	var path []string
	var n ast.Node = m
	for {
		switch x := n.(type) {
		case *ast.MemberNode:
			if s, ok := x.Property.(*ast.StringNode); ok {
				path = append(path, s.Value)
			} else {
				path = path[:0]
			}
			n = x.Node
			continue
		case *ast.ChainNode:
			n = x.Node
			continue
		case *ast.IdentifierNode:
			if !isNamespace[x.Value] {
				return ref{}, false
			}
			for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
				path[i], path[j] = path[j], path[i]
			}
			return ref{ns: x.Value, path: path, text: m.String()}, true
		}
		return ref{}, false
	}
}

// arithmeticRE admits what a templated max_iterations may hold once
// rendered: numbers, + - * / %, parentheses and spaces.
var arithmeticRE = regexp.MustCompile(`^[0-9+\-*/%().\s]+$`)

// Arithmetic evaluates integer arithmetic (+ - * / % and parentheses), as
// AWF does for a rendered max_iterations such as "3 * 4": a division that
// leaves a remainder truncates.
func Arithmetic(s string) (int, error) {
	if !arithmeticRE.MatchString(s) || strings.Contains(s, "**") || strings.Contains(s, "++") {
		return 0, fmt.Errorf("not an integer or arithmetic on integers")
	}
	v, err := expr.Eval(s, nil)
	if err != nil {
		return 0, fmt.Errorf("arithmetic: %w", err)
	}
	switch x := v.(type) {
	case int:
		return x, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > math.MaxInt32 {
			return 0, fmt.Errorf("arithmetic gives %v", x)
		}
		return int(x), nil
	}
	return 0, fmt.Errorf("arithmetic gives %T", v)
}
