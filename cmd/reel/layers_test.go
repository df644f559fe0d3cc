package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCommandsStayThin: the command layer neither scans raw JSON (the
// package that owns a question reads what it needs: internal/runs,
// internal/query) nor writes transcripts (the recorder is the engine's and
// the importer's).
func TestCommandsStayThin(t *testing.T) {
	// Known exceptions, until issue 20's importer step moves importing out
	// of the command layer (internal/importer): the lead removes them then.
	importing := map[string]bool{"import_record.go": true, "interop.go": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		lib := ""
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			switch p {
			case "github.com/reelhq/reel/internal/rawjson", "github.com/reelhq/reel/internal/rawevent":
				t.Errorf("%s imports %s: the package that owns the question reads the raw JSON", name, p)
			case "github.com/reelhq/reel/transcript":
				lib = "transcript"
				if imp.Name != nil {
					lib = imp.Name.Name
				}
			}
		}
		if lib == "" || importing[name] {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == lib {
				switch sel.Sel.Name {
				case "Create", "Open", "Recorder":
					t.Errorf("%s:%d uses the recorder (transcript.%s): transcripts are written by the engine and the importer", name, fset.Position(sel.Pos()).Line, sel.Sel.Name)
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Fatalf("only %d files checked", checked)
	}
}
