package runs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/testfixtures"
)

// TestOneWayToReadARun walks every package of the module and fails when
// one other than this one reads a transcript itself: the library's reader
// and follower (transcript.NewReader, Follow, ReadFile, ReadAll) and the
// path of a child's transcript (a ChildPath of any package) belong here, so that every reader shares one depth limit,
// one damage policy and one way of finding a run. Tests may read fixtures
// as they like.
func TestOneWayToReadARun(t *testing.T) {
	root := testfixtures.ModuleRoot(t)
	banned := map[string]bool{"NewReader": true, "Follow": true, "ReadFile": true, "ReadAll": true}
	const lib = "github.com/reelhq/reel/transcript"
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			// the library itself, and this package, may
			if rel == "transcript" || rel == filepath.Join("internal", "runs") || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		libName := ""
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch p {
			case lib:
				libName = "transcript"
				if imp.Name != nil {
					libName = imp.Name.Name
				}
			case "github.com/reelhq/reel/internal/runstore", "github.com/reelhq/reel/internal/rawevent":
				t.Errorf("%s imports %s: read runs through internal/runs", rel, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && libName != "" && id.Name == libName && banned[x.Sel.Name] {
					t.Errorf("%s:%d calls transcript.%s: read runs through internal/runs", rel, fset.Position(x.Pos()).Line, x.Sel.Name)
				}
				if x.Sel.Name == "ChildPath" {
					t.Errorf("%s:%d: a child's transcript is found by runs.Run.Child", rel, fset.Position(x.Pos()).Line)
				}
			case *ast.FuncDecl:
				if x.Name.Name == "ChildPath" {
					t.Errorf("%s:%d declares ChildPath: a child's transcript is found by runs.Run.Child", rel, fset.Position(x.Pos()).Line)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: is %s the module?", checked, root)
	}
}
