package errcode

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

func TestCatalog(t *testing.T) {
	seen := map[Code]bool{}
	for _, e := range Search("") {
		if seen[e.Code] || len(strings.Split(string(e.Code), ".")) != 3 || e.Description == "" || e.Resolution == "" {
			t.Errorf("entry %+v", e)
		}
		seen[e.Code] = true
		for _, r := range e.Related {
			if _, ok := Lookup(r); !ok {
				t.Errorf("%s: related code %s is not in the catalog", e.Code, r)
			}
		}
	}
	if len(seen) != 16 {
		t.Errorf("%d codes", len(seen))
	}
	for code, exit := range map[Code]int{UserInputMissingFile: 1, WorkflowParseYAMLSyntax: 2, ExecutionCommandTimeout: 3, SystemIOWriteFailed: 4, "ODD.X.Y": 1} {
		if code.ExitCode() != exit {
			t.Errorf("%s exits %d, want %d", code, code.ExitCode(), exit)
		}
	}
	var got []string
	for _, e := range Search("workflow.parse") {
		got = append(got, string(e.Code))
	}
	if strings.Join(got, " ") != "WORKFLOW.PARSE.UNKNOWN_FIELD WORKFLOW.PARSE.YAML_SYNTAX" {
		t.Errorf("prefix search %v", got)
	}
	if len(Search("NOPE")) != 0 {
		t.Error("NOPE matched")
	}
}

func TestErrorText(t *testing.T) {
	cause := errors.New("open x: no such file")
	e := Wrap(UserInputMissingFile, cause, map[string]any{"path": "x", "dir": "/d"}, "look elsewhere")
	want := "[USER.INPUT.MISSING_FILE] open x: no such file\n  Details:\n    dir: /d\n    path: x\n  Hint: look elsewhere"
	if got := e.Text(true); got != want {
		t.Errorf("text:\n%s\nwant\n%s", got, want)
	}
	if got := e.Text(false); strings.Contains(got, "Hint") {
		t.Errorf("no hints: %s", got)
	}
	if !errors.Is(e, cause) {
		t.Error("the cause is lost")
	}
}

// TestCatalogMatchesCodes holds catalog.md to the Code constants declared
// in errcode.go: each constant has exactly one section, each section and
// each related code is a constant.
func TestCatalogMatchesCodes(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "errcode.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	known := map[Code]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Code" {
				for _, val := range v.Values {
					s, _ := strconv.Unquote(val.(*ast.BasicLit).Value)
					known[Code(s)] = true
				}
			}
		}
	}
	if len(known) == 0 {
		t.Fatal("no Code constants found in errcode.go")
	}
	entries, err := parseCatalog(catalogText)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[Code]int{}
	for _, e := range entries {
		sections[e.Code]++
		if !known[e.Code] {
			t.Errorf("catalog.md: %s is not a Code constant", e.Code)
		}
		for _, r := range e.Related {
			if !known[r] {
				t.Errorf("catalog.md: %s: related %q is not a Code constant", e.Code, r)
			}
		}
	}
	for c := range known {
		if sections[c] != 1 {
			t.Errorf("catalog.md has %d sections for %s, want 1", sections[c], c)
		}
	}
}

func TestParseCatalogErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"## A.B.C\n\nmeans\n\nResolution: fix\n\nResolution: again\n", `line 7, in A.B.C: "Resolution: again" is out of place`},
		{"## A.B.C\n\nmeans\n\nmore\n\nResolution: fix\n", `line 5, in A.B.C: "more" is out of place`},
		{"## A.B.C\n\nResolution: fix\n\nmeans\n", `line 5, in A.B.C: "means" is out of place`},
		{"## A.B.C\n\nmeans\n\nRelated: X.Y.Z\n", "A.B.C has no description or no resolution"},
		{"## A.B.C\n\nResolution: fix\n", "A.B.C has no description or no resolution"},
	} {
		if _, err := parseCatalog(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
	got, err := parseCatalog("# intro\n\ntext\n\n## A.B.C\n\nmeans\n\nResolution: fix\n\nRelated: X.Y.Z, U.V.W\n\n## D.E.F\n\nd\n\nResolution: r\n")
	if err != nil || len(got) != 2 || got[0].Description != "means" || got[0].Resolution != "fix" ||
		len(got[0].Related) != 2 || got[0].Related[1] != "U.V.W" || got[1].Related != nil {
		t.Errorf("%+v %v", got, err)
	}
}
