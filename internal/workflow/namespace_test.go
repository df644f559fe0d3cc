package workflow

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func render(t *testing.T, src string, data map[string]any) string {
	t.Helper()
	tm, err := parseTemplate(nil, src, Pos{})
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	s, err := tm.Execute(data)
	if err != nil {
		t.Fatalf("execute %q: %v", src, err)
	}
	return s
}

func sampleData() map[string]any {
	return map[string]any{
		NSInputs: map[string]any{"name": "ann", "items": TemplateValue([]any{"a", "b"})},
		NSStates: map[string]any{"build": map[string]any{"Output": "ok\n", "ExitCode": 0,
			"JSON": TemplateValue(map[string]any{"files": []any{"x.go", "y.go"}, "n": 2.0})}},
		NSWorkflow: map[string]any{"ID": "run-1", "Name": "wf"},
		NSEnv:      map[string]any{"HOME": "/home/ann"},
		NSContext:  map[string]any{"WorkingDir": "/src", "User": "ann", "Hostname": "box"},
		NSAWF:      map[string]string{"config_dir": "/home/ann/.config/awf"},
		NSLoop: map[string]any{"Item": LoopItem(map[string]any{"k": "v"}), "Index": 1, "Index1": 2,
			"Parent": map[string]any{"Item": LoopItem("outer"), "Index": 0}},
	}
}

// The dot-less form AWF registers reads the same data as the dotted one,
// also where range or with has rebound dot.
func TestDotlessReferencesReadTheRootData(t *testing.T) {
	d := sampleData()
	for _, c := range []struct{ src, want string }{
		{"{{inputs.name}}|{{.inputs.name}}", "ann|ann"},
		{"{{states.build.Output}}", "ok\n"},
		{"{{workflow.ID}} {{env.HOME}} {{context.WorkingDir}} {{awf.config_dir}}", "run-1 /home/ann /src /home/ann/.config/awf"},
		{"{{loop.Index1}} {{loop.Parent.Item}}", "2 outer"},
		{"{{range .states.build.JSON.files}}[{{.}} {{inputs.name}} {{$.inputs.name}}]{{end}}", "[x.go ann ann][y.go ann ann]"},
		{"{{with .loop.Item}}{{.k}}/{{loop.Index}}{{end}}", "v/1"},
		{"{{if eq inputs.name \"ann\"}}yes{{end}}", "yes"},
		{"{{len inputs}}", "2"},
		{"{{(inputs).name}}", "ann"},
		{"{{index .states \"build\" \"ExitCode\"}}", "0"},
	} {
		if got := render(t, c.src, d); got != c.want {
			t.Errorf("%s = %q, want %q", c.src, got, c.want)
		}
	}
	if _, err := parseTemplate(nil, `{{inputs "name"}}`, Pos{}); err == nil || !strings.Contains(err.Error(), "inputs is a namespace, not a function") {
		t.Errorf("namespace called with an argument: %v", err)
	}
}

// Parsed JSON prints as JSON, never as Go's map[...] form; a loop item
// prints as AWF prints it.
func TestJSONValuesPrintAsJSON(t *testing.T) {
	d := sampleData()
	for _, c := range []struct{ src, want string }{
		{"{{.states.build.JSON}}", `{"files":["x.go","y.go"],"n":2}`},
		{"{{.states.build.JSON.files}}", `["x.go","y.go"]`},
		{"{{index .states.build.JSON.files 1}}", "y.go"},
		{"{{.loop.Item}}", `{"k":"v"}`},
		{"{{.inputs.items}}", `["a","b"]`},
		{"{{json .loop.Item}}", `{"k":"v"}`},
	} {
		if got := render(t, c.src, d); got != c.want {
			t.Errorf("%s = %q, want %q", c.src, got, c.want)
		}
	}
	for _, c := range []struct {
		item any
		want string
	}{
		{"main.go", "main.go"},
		{42.0, "42"},
		{1e21, "1000000000000000000000"},
		{3.25, "3.25"},
		{true, "true"},
		{nil, "null"},
		{[]any{1.0, "two", map[string]any{"a": []any{}}}, `[1,"two",{"a":[]}]`},
	} {
		if got := render(t, "{{.loop.Item}}", map[string]any{NSLoop: map[string]any{"Item": LoopItem(c.item)}}); got != c.want {
			t.Errorf("item %#v prints %q, want %q", c.item, got, c.want)
		}
	}
	if got := render(t, "{{json .loop.Item}}", map[string]any{NSLoop: map[string]any{"Item": LoopItem(nil)}}); got != "null" {
		t.Errorf("json of a while loop's item = %q", got)
	}
}

func TestTemplateFunctions(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.txt")
	os.WriteFile(small, []byte("file body\n"), 0o644)
	big := filepath.Join(dir, "big.txt")
	os.WriteFile(big, make([]byte, maxReadFile+1), 0o644)
	d := map[string]any{NSInputs: map[string]any{"f": small, "list": TemplateValue([]any{"a", 2.0}), "q": "it's"}}
	for _, c := range []struct{ src, want string }{
		{`{{join (split " a, b ,c" ",") "|"}}`, "a|b|c"},
		{`{{join .inputs.list "+"}}`, "a+2"},
		{`{{range split "x;y" ";"}}<{{trimSpace .}}>{{end}}`, "<x><y>"},
		{`{{trimSpace "  pad  "}}{{trim " t "}}`, "padt"},
		{`{{escape "plain"}} {{escape "two words"}} {{escape .inputs.q}} {{escape ""}}`, `plain 'two words' 'it'\''s' ''`},
		{`{{readFile .inputs.f}}`, "file body\n"},
		{`{{json .inputs.list}} {{toJSON "s"}}`, `["a",2] "s"`},
		{`{{upper "a"}}{{lower "B"}}{{replace "aXa" "X" "-"}}{{default "d" ""}}`, "Ab" + "a-a" + "d"},
	} {
		if got := render(t, c.src, d); got != c.want {
			t.Errorf("%s = %q, want %q", c.src, got, c.want)
		}
	}
	for _, c := range []struct{ src, want string }{
		{`{{readFile "` + dir + `"}}`, "is a directory"},
		{`{{readFile "` + big + `"}}`, "larger than the 1048576 byte limit"},
		{`{{readFile "` + filepath.Join(dir, "none") + `"}}`, "no such file"},
		{`{{join "text" ","}}`, "join: want a list"},
	} {
		tm, err := parseTemplate(nil, c.src, Pos{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tm.Execute(d); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.src, err, c.want)
		}
	}
}

func TestArithmetic(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"2 * 3", 6, true}, {"7 / 2", 3, true}, {"(1 + 2) % 2", 1, true}, {" 10 - 4 ", 6, true},
		{"2 ** 3", 0, false}, {"abs(2)", 0, false}, {"1 / 0", 0, false}, {"", 0, false}, {"inputs.x * 2", 0, false},
	} {
		got, err := Arithmetic(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("Arithmetic(%q) = %d, %v", c.in, got, err)
		}
	}
}

func TestParseInput(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "app.YAML")
	os.WriteFile(cfg, nil, 0o644)
	one, ten := 1.0, 10.0
	for _, c := range []struct {
		in   Input
		v    any
		want any
		err  string
	}{
		{Input{Type: InputInteger}, " 42 ", int64(42), ""},
		{Input{Type: InputInteger}, 42.0, int64(42), ""},
		{Input{Type: InputInteger}, "4.5", nil, "not an integer"},
		{Input{Type: InputNumber}, "3.5", 3.5, ""},
		{Input{Type: InputNumber}, "NaN", nil, "not a number"},
		{Input{Type: InputBoolean}, "Yes", true, ""},
		{Input{Type: InputBoolean}, "0", false, ""},
		{Input{Type: InputBoolean}, false, false, ""},
		{Input{Type: InputBoolean}, "maybe", nil, "not a boolean"},
		{Input{Type: InputArray}, `["a", 1]`, []any{"a", 1.0}, ""},
		{Input{Type: InputArray}, "a, b", []any{"a", "b"}, ""},
		{Input{Type: InputArray}, []any{"x"}, []any{"x"}, ""},
		{Input{Type: InputArray}, "[broken", nil, "not a JSON array"},
		{Input{Type: InputString}, []any{"x"}, nil, "a list is not a string"},
		{Input{Type: InputString, Validation: &InputValidation{Pattern: "^v[0-9]+$"}}, "v1", "v1", ""},
		{Input{Type: InputString, Validation: &InputValidation{Pattern: "^v[0-9]+$"}}, "1", nil, "does not match"},
		{Input{Type: InputString, Validation: &InputValidation{Enum: []string{"dev", "prod"}}}, "prd", nil, `is not one of dev, prod (did you mean "prod"?)`},
		{Input{Type: InputInteger, Validation: &InputValidation{Min: &one, Max: &ten}}, "11", nil, "above the maximum 10"},
		{Input{Type: InputNumber, Validation: &InputValidation{Min: &one}}, "0.5", nil, "below the minimum 1"},
		// min and max bound numbers only, as in AWF; a pattern, strings only
		{Input{Type: InputString, Validation: &InputValidation{Max: &one}}, "long text", "long text", ""},
		{Input{Type: InputInteger, Validation: &InputValidation{Pattern: "^x$"}}, "5", int64(5), ""},
		{Input{Type: InputString, Validation: &InputValidation{FileExists: true, FileExtension: []string{".yaml"}}}, cfg, cfg, ""},
		{Input{Type: InputString, Validation: &InputValidation{FileExtension: []string{".json"}}}, cfg, nil, "does not have one of the extensions .json"},
		{Input{Type: InputString, Validation: &InputValidation{FileExists: true}}, filepath.Join(dir, "no"), nil, "does not exist"},
	} {
		got, err := ParseInput(c.in, c.v)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %#v: err %v, want %q", c.in.Type, c.v, err, c.err)
			}
			continue
		}
		if err != nil || fmtAny(got) != fmtAny(c.want) {
			t.Errorf("%s %#v = %#v, %v; want %#v", c.in.Type, c.v, got, err, c.want)
		}
	}
}

// fmtAny shows a value's type and JSON, so that int64(42) and 42.0 differ.
func fmtAny(v any) string {
	b, _ := json.Marshal(v)
	return fmt.Sprintf("%T %s", v, b)
}
