package workflow

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
)

// project makes a project directory holding the given files (paths
// relative to it) and returns it.
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		testfixtures.WriteFile(t, filepath.Join(dir, name), body)
	}
	return dir
}

func loadIn(t *testing.T, dir, name string) (*Workflow, error) {
	t.Helper()
	return Load(filepath.Join(dir, name), Options{ProjectDir: dir})
}

const echoTemplate = `name: echo
parameters:
  - name: message
    required: true
  - name: prefix
    default: "[INFO]"
  - name: timeout
    default: 7
states:
  initial: echo
  echo:
    type: command
    command: "echo '{{parameters.prefix}} {{ .parameters.message }}'"
    timeout: "{{parameters.timeout}}"
    dir: /tmp
    retry: {max_attempts: 2}
    on_success: elsewhere
`

func TestUseTemplateExpands(t *testing.T) {
	dir := project(t, map[string]string{
		".awf/templates/echo.yaml": echoTemplate,
		"wf.yaml": `name: w
inputs: [{name: who, default: world}]
states:
  initial: a
  a:
    use_template: echo
    parameters: {message: "hi {{.inputs.who}}"}
    on_success: b
  b:
    type: step
    command: placeholder
    use_template: echo
    parameters: {message: m, prefix: 3, timeout: 90}
    dir: here
    hooks: {pre: [{command: echo pre}]}
    capture: {stdout: out}
  c:
    use_template: echo
    parameters: {message: x}
    timeout: 1m
    retry: {max_attempts: 5}
`,
	})
	_, err := loadIn(t, dir, "wf.yaml")
	if err == nil || !strings.Contains(err.Error(), `state "c" is unreachable`) {
		t.Fatalf("err = %v", err)
	}
	// load again without the unreachable state
	b, _ := os.ReadFile(filepath.Join(dir, "wf.yaml"))
	os.WriteFile(filepath.Join(dir, "wf.yaml"), []byte(strings.Replace(string(b), "    capture: {stdout: out}\n", "    capture: {stdout: out}\n    on_success: c\n", 1)), 0o644)
	wf, err := loadIn(t, dir, "wf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := wf.States["a"]
	if a.Type != TypeStep || a.Command.Source != "echo '[INFO] hi {{.inputs.who}}'" || a.Timeout != 7*time.Second || a.OnSuccess != "b" ||
		a.Dir.Source != "/tmp" || a.Retry.MaxAttempts != 2 {
		t.Fatalf("a = %+v", a)
	}
	out, err := a.Command.Execute(map[string]any{"inputs": map[string]any{"who": "you"}})
	if err != nil || out != "echo '[INFO] hi you'" {
		t.Fatalf("a runs %q %v", out, err)
	}
	// AWF's form: type and a placeholder command, the template's command wins
	bst := wf.States["b"]
	if bst.Command.Source != "echo '3 m'" || bst.Timeout != 90*time.Second || bst.Dir.Source != "here" ||
		bst.Hooks == nil || len(bst.Hooks.Pre) != 1 || bst.Capture.Stdout != "out" || bst.OnSuccess != "c" {
		t.Fatalf("b = %+v", bst)
	}
	c := wf.States["c"]
	if c.Timeout != time.Minute || c.Retry.MaxAttempts != 5 || c.OnSuccess != "" {
		t.Fatalf("c = %+v (the template's own on_success must be dropped)", c)
	}
}

func TestTemplatePrimaryStateAndPlaces(t *testing.T) {
	dir := project(t, map[string]string{
		// named like the template wins over initial
		".awf/templates/named.yaml": "name: named\nstates:\n  initial: first\n  first: {type: step, command: echo first}\n  named: {type: step, command: echo named}\n",
		// then initial over file order
		".awf/templates/init.yaml": "name: init\nstates:\n  initial: second\n  first: {type: step, command: echo first}\n  second: {type: step, command: echo second}\n",
		// .reel/templates before .awf/templates
		".awf/templates/both.yaml":  "name: both\nstates:\n  s: {type: step, command: echo awf}\n",
		".reel/templates/both.yml":  "name: both\nstates:\n  s: {type: step, command: echo reel}\n",
		".awf/templates/agent.yaml": "name: agent\nparameters: [{name: p}]\nstates:\n  agent: {type: agent, provider: claude, prompt: '{{parameters.p}}', options: {model: '{{parameters.model}}'}}\n",
		"wf.yaml": `name: w
states:
  initial: a
  a: {use_template: named, on_success: b}
  b: {use_template: init, on_success: c}
  c: {use_template: both, on_success: d}
  d: {use_template: agent, parameters: {p: review this, model: opus}}
`,
	})
	wf, err := loadIn(t, dir, "wf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for st, want := range map[string]string{"a": "echo named", "b": "echo second", "c": "echo reel"} {
		if got := wf.States[st].Command.Source; got != want {
			t.Errorf("%s runs %q, want %q", st, got, want)
		}
	}
	// a template of any state type keeps all its fields (AWF copies only a
	// command step's); a parameter the template uses but does not declare
	// is accepted, as in AWF
	d := wf.States["d"]
	if d.Type != TypeAgent || d.Prompt.Source != "review this" || literal(d.Options["model"]) != "opus" {
		t.Fatalf("d = %+v", d)
	}
}

func TestTemplateValuesKeepTheirType(t *testing.T) {
	dir := project(t, map[string]string{
		".awf/templates/label.yaml": `name: label
parameters:
  - {name: labels, required: true}
  - {name: number, required: true}
states:
  label:
    type: operation
    operation: github.add_labels
    inputs:
      number: "{{parameters.number}}"
      labels: "{{parameters.labels}}"
      repo: "o/{{parameters.labels}}"
`,
		"wf.yaml": "name: w\nstates:\n  initial: a\n  a: {use_template: label, parameters: {number: 42, labels: [bug, p1]}}\n",
	})
	wf, err := loadIn(t, dir, "wf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := wf.States["a"].Inputs
	if in["number"] != 42 {
		t.Errorf("number = %#v", in["number"])
	}
	ls, ok := in["labels"].([]any)
	if !ok || len(ls) != 2 || ls[0].(*Template).Source != "bug" {
		t.Errorf("labels = %#v", in["labels"])
	}
	if r := in["repo"].(*Template).Source; r != `o/["bug","p1"]` {
		t.Errorf("a list inside text is JSON: %q", r)
	}
}

func TestTemplateProblems(t *testing.T) {
	files := map[string]string{
		".awf/templates/echo.yaml":      echoTemplate,
		".awf/templates/broken.yaml":    "name: broken\nstates:\n  s:\n    type: command\n    command: 'echo {{parameters.nope}}'\n    on_sucess: x\n",
		".awf/templates/syntax.yaml":    "name: s\nstates:\n  s: {type: command, command: [\n",
		".awf/templates/noname.yaml":    "states:\n  s: {type: command, command: x}\n",
		".awf/templates/loop-a.yaml":    "name: loop-a\nstates:\n  s: {type: command, use_template: loop-b}\n",
		".awf/templates/loop-b.yaml":    "name: loop-b\nstates:\n  s: {type: command, use_template: loop-a}\n",
		".awf/templates/wrongkind.yaml": "name: w\nparameters: [{name: p, required: yes please}]\nfoo: 1\nstates:\n  s: {type: command, command: x}\n",
	}
	for _, c := range []struct{ state, want string }{
		{"{use_template: nope}", `wf.yaml:4:21: template "nope" not found (looked for nope.yaml in `},
		{"{use_template: ../etc/passwd}", `template name "../etc/passwd" must be a plain name`},
		{"{use_template: echo}", `wf.yaml:4:21: template "echo" is missing required parameter "message"`},
		{"{use_template: echo, parameters: {mesage: x}}", `wf.yaml:4:40: template "echo" has no parameter "mesage" (parameters: message, prefix, timeout) (did you mean "message"?)`},
		{"{use_template: echo, parameters: {message: x}, type: agent}", `wf.yaml:4:59: state "a" is of type "agent" but its template "echo" is of type "step"`},
		{"{use_template: echo, parameters: {message: x}, on_sucess: b}", `unknown field "on_sucess" in step state "a"`},
		{"{use_template: broken}", `broken.yaml:5:14: {{parameters.nope}}: template "broken" declares no parameter "nope"`},
		{"{use_template: syntax}", `syntax.yaml:3:3: invalid YAML`},
		{"{use_template: noname}", `noname.yaml:1:1: template is missing its name`},
		{"{use_template: loop-a}", `loop-b.yaml:3:36: circular template reference: loop-a -> loop-b -> loop-a`},
		{"{use_template: wrongkind}", `wrongkind.yaml:2:34: parameter required must be true or false`},
		{"{use_template: wrongkind}", `wrongkind.yaml:3:1: unknown field "foo" in a step template`},
		{"{use_template: [echo]}", `use_template must be a string`},
	} {
		files["wf.yaml"] = "name: w\nstates:\n  initial: a\n  a: " + c.state + "\n"
		dir := project(t, files)
		_, err := loadIn(t, dir, "wf.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.state, err, c.want)
		}
		var probs Problems
		if errors.As(err, &probs) {
			for _, p := range probs {
				if p.Pos.Line < 1 || p.Pos.Col < 1 || p.File == "" {
					t.Errorf("%s: problem without a place: %+v", c.state, p)
				}
			}
		}
	}
	// the template's own mistake is reported once, in the template file,
	// however many states use it
	files["wf.yaml"] = "name: w\nstates:\n  initial: a\n  a: {use_template: syntax, on_success: b}\n  b: {use_template: syntax}\n"
	_, err := loadIn(t, project(t, files), "wf.yaml")
	if n := strings.Count(err.Error(), "invalid YAML"); n != 1 {
		t.Errorf("template problem reported %d times:\n%v", n, err)
	}
	if strings.Contains(err.Error(), "unreachable") {
		t.Errorf("a broken template hides the state's flow:\n%v", err)
	}
}

// AWF's own template fixtures behave as AWF documents them.
func TestAWFTemplateFixtures(t *testing.T) {
	src := filepath.Join(testfixtures.Root(t), "awf", "fixtures", "templates")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Skipf("AWF template fixtures: %v", err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[".awf/templates/"+e.Name()] = string(b)
	}
	for _, c := range []struct {
		state string
		run   string // the command the state runs, or
		fail  string // the problem it has
	}{
		{"{use_template: simple-echo, parameters: {message: hello}}", "echo '[INFO] hello'", ""},
		{"{use_template: ai-analyze, parameters: {prompt: review}}", "claude -c 'review'", ""},
		{"{use_template: multi-state, parameters: {input: X}}", "echo 'Processing X'", ""},
		{"{use_template: no-params}", "echo 'static command'", ""},
		{"{use_template: all-required, parameters: {source: a, destination: b, format: png}}", "convert a -f png b", ""},
		{"{use_template: all-required, parameters: {source: a}}", "", `missing required parameter "destination"`},
		{"{use_template: circular-a}", "", "circular template reference: circular-a -> circular-b -> circular-a"},
		{"{use_template: invalid-missing-name}", "", "template is missing its name"},
		{"{use_template: invalid-syntax}", "", "invalid-syntax.yaml:10:5: invalid YAML"},
	} {
		files["wf.yaml"] = "name: w\nstates:\n  initial: a\n  a: " + c.state + "\n"
		wf, err := loadIn(t, project(t, files), "wf.yaml")
		if c.fail != "" {
			if err == nil || !strings.Contains(err.Error(), c.fail) {
				t.Errorf("%s:\n got %v\nwant %s", c.state, err, c.fail)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.state, err)
			continue
		}
		if got := wf.States["a"].Command.Source; got != c.run {
			t.Errorf("%s runs %q, want %q", c.state, got, c.run)
		}
	}
}

// FuzzStepTemplate: any template file and parameters give a workflow or
// problems with a file and position, never a panic.
func FuzzStepTemplate(f *testing.F) {
	f.Add([]byte(echoTemplate), []byte("{message: hi}"))
	f.Add([]byte("name: t\nstates:\n  t: {type: command, command: '{{parameters.a}}{{parameters.a}}'}\n"), []byte("{a: [1, {b: 2}]}"))
	f.Add([]byte("name: t\nstates:\n  t: {type: command, use_template: t}\n"), []byte("{}"))
	f.Add([]byte("name: t\nparameters: [{name: x, default: &a [*a]}]\nstates:\n  t: &s {type: command, command: *s}\n"), []byte("{x: 1}"))
	f.Fuzz(func(t *testing.T, tpl, params []byte) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, ".awf", "templates"), 0o755)
		os.WriteFile(filepath.Join(dir, ".awf", "templates", "t.yaml"), tpl, 0o644)
		wfSrc := "name: w\nstates:\n  initial: a\n  a:\n    use_template: t\n    parameters: " + strings.ReplaceAll(string(params), "\n", " ") + "\n"
		os.WriteFile(filepath.Join(dir, "wf.yaml"), []byte(wfSrc), 0o644)
		done := make(chan struct{})
		var wf *Workflow
		var err error
		go func() {
			defer close(done)
			wf, err = Load(filepath.Join(dir, "wf.yaml"), Options{ProjectDir: dir})
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("load hangs")
		}
		if err == nil {
			if wf.States["a"] == nil {
				t.Fatal("valid workflow without its state")
			}
			return
		}
		var probs Problems
		if !errors.As(err, &probs) {
			return // a file system error
		}
		for _, p := range probs {
			if p.Pos.Line < 1 || p.Pos.Col < 1 || p.File == "" {
				t.Fatalf("problem without a place: %+v", p)
			}
		}
	})
}
