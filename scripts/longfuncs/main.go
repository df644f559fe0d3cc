// Command longfuncs lists the functions of a Go tree longer than a limit
// (100 lines by default), longest first, and counts them: the figure
// docs/performance.md and the house's review keep an eye on. Test files are
// left out unless -tests is given.
//
//	go run ./scripts/longfuncs [-min 100] [-tests] [dir]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	pos   string
	name  string
	lines int
}

func main() {
	min := flag.Int("min", 100, "report functions with more lines than this")
	tests := flag.Bool("tests", false, "count _test.go files too")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	long, err := find(root, *min, *tests)
	if err != nil {
		fmt.Fprintln(os.Stderr, "longfuncs:", err)
		os.Exit(2)
	}
	for _, f := range long {
		fmt.Printf("%5d  %s  %s\n", f.lines, f.pos, f.name)
	}
	fmt.Printf("%d functions over %d lines\n", len(long), *min)
}

func find(root string, min int, tests bool) ([]fn, error) {
	fset := token.NewFileSet()
	var long []fn
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) || strings.HasSuffix(path, ".pb.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > min {
				name := fd.Name.Name
				if fd.Recv != nil && len(fd.Recv.List) > 0 {
					name = "(" + recv(fd.Recv.List[0].Type) + ")." + name
				}
				long = append(long, fn{pos: fmt.Sprintf("%s:%d", path, start.Line), name: name, lines: n})
			}
		}
		return nil
	})
	sort.Slice(long, func(i, j int) bool { return long[i].lines > long[j].lines })
	return long, err
}

func recv(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + recv(t.X)
	case *ast.IndexExpr:
		return recv(t.X)
	case *ast.IndexListExpr:
		return recv(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}
