package errcode

import (
	"errors"
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
