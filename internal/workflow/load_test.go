package workflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reelhq/reel/internal/golden"
)

// The problems of a deliberately broken file are all reported at once, each
// with its line and column; testdata/bad.problems is the golden list.
func TestBadWorkflowGolden(t *testing.T) {
	_, err := Load("testdata/bad.yaml", Options{})
	probs, ok := err.(Problems)
	if !ok {
		t.Fatalf("err = %v (%T)", err, err)
	}
	golden.Check(t, filepath.Join("testdata", "bad.problems"), []byte(probs.Error()+"\n"))
	for _, p := range probs {
		if p.Pos.Line < 1 || p.Pos.Col < 1 {
			t.Errorf("problem without position: %v", p)
		}
	}
}

func TestGoodWorkflowLoadsEveryField(t *testing.T) {
	wf, err := Load("testdata/good.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := wf.States["read"]
	if read.Timeout != 90*time.Second || read.Retry.MaxAttempts != 3 || read.Retry.InitialDelay != time.Second ||
		read.Retry.MaxDelay != 10*time.Second || read.Retry.Multiplier != 3 || len(read.Retry.RetryableExitCodes) != 2 {
		t.Errorf("read = %+v retry %+v", read, read.Retry)
	}
	if !read.OnFailure.Inline || read.OnFailure.Status != 3 || len(read.Transitions) != 2 || read.Transitions[1].When != nil {
		t.Errorf("read flow %+v %+v", read.OnFailure, read.Transitions)
	}
	if n := wf.States["nested"].Call; n.Workflow != "child" || n.Timeout != 5*time.Minute || n.Outputs["out"] != "result" || n.Inputs["n"].Source != "3" {
		t.Errorf("nested call %+v", n)
	}
	if f := wf.States["flat"].Call; f.Workflow != "child" || f.Outputs["result"] != "result" || f.Inputs["a"].Source != "b" {
		t.Errorf("flat call %+v", f)
	}
	if th := wf.States["think"]; th.Timeout != time.Minute || th.OutputFormat != "json" || literal(th.Options["model"]) != "gpt-4o-mini" {
		t.Errorf("think %+v", th)
	}
	if wf.States["fan"].Strategy != StrategyBestEffort || wf.States["each"].MaxIterations != 50 || wf.States["spin"].MaxIterations != DefaultMaxIterations {
		t.Error("loop/parallel fields")
	}
	if wf.Inputs[1].Type != "integer" || *wf.Inputs[1].Default != "3" || wf.Inputs[0].Validation.Max == nil {
		t.Errorf("inputs %+v", wf.Inputs)
	}
	v, err := wf.Outputs[0].From.Eval(map[string]any{"states": map[string]any{"nested": map[string]any{"Data": map[string]any{"out": 7}}}})
	if err != nil || v != 7 {
		t.Errorf("output from = %v %v", v, err)
	}
}

func TestMalformedYAMLNamesLine(t *testing.T) {
	for _, c := range []struct {
		src  string
		want string
	}{
		{"name: x\nstates:\n  initial: a\n  a: {type: step\n", "f.yaml:3:3: invalid YAML"},
		{"name: x\nstates:\n\tinitial: a\n", "f.yaml:3:"},
		{"name: [x\n", "f.yaml:"},
		{"", "f.yaml:1:1: empty workflow file"},
		{"- a\n- b\n", "f.yaml:1:1: workflow must be a mapping"},
		{"name: x\nname: y\nstates: {initial: a, a: {type: terminal}}\n", `f.yaml:2:1: workflow: duplicate key "name"`},
		{"name: x\nstates:\n  initial: a\n  a: {type: step, command: \"\x00\"}\n", "f.yaml:"},
	} {
		_, err := Parse([]byte(c.src), "f.yaml", Options{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want prefix %q", c.src, err, c.want)
		}
	}
}

func TestUnknownFieldSuggestion(t *testing.T) {
	_, err := Parse([]byte("name: x\nstates:\n  initial: a\n  a:\n    type: step\n    command: 'true'\n    on_sucess: a\n"), "f.yaml", Options{})
	want := `f.yaml:7:5: unknown field "on_sucess" in step state "a" (did you mean "on_success"?)`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

// A key the data lacks fails the template with a message that names it,
// never an empty string.
func TestTemplateMissingKeyFails(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"[{{.inputs.absent}}]", `.inputs.absent: no input "absent"`},
		{"[{{inputs.absent}}]", `.inputs.absent: no input "absent"`},
		{"{{.states.later.Output}}", `.states.later.Output: state "later" has not run yet`},
		{"{{env.NOPE}}", `.env.NOPE: environment variable NOPE is not set`},
		{"{{.loop.Item}}", `.loop.Item: not inside a loop`},
		{"{{.states.a.output}}", `.states.a.output: no value for "output"`},
	} {
		tm, err := parseTemplate(nil, c.src, Pos{})
		if err != nil {
			t.Fatal(err)
		}
		data := map[string]any{"inputs": map[string]any{}, "states": map[string]any{"a": map[string]any{"Output": "x"}}, "env": map[string]any{}}
		s, err := tm.Execute(data)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want an error ending %q", c.src, s, err, c.want)
		}
	}
}

func TestRecursiveAliasIsAProblem(t *testing.T) {
	src := "name: x\nstates:\n  initial: a\n  a: {type: foo, config: &c {k: *c}}\n"
	done := make(chan error, 1)
	go func() { _, err := Parse([]byte(src), "f.yaml", Options{}); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "f.yaml:4:26: config is nested more than 64 levels deep") {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("recursive alias hangs the loader")
	}
}

// FuzzParse: any bytes give a workflow or problems with positions, never a
// panic.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/good.yaml", "testdata/bad.yaml", "testdata/awf-ext.yaml", "testdata/awf-agent.yaml"} {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("name: x\nstates: {initial: a, a: {type: terminal}}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("name: x\nstates:\n  initial: a\n  a: {type: foo, config: &c {k: [*c, *c]}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		wf, err := Parse(data, "fuzz.yaml", Options{})
		if err == nil {
			if wf.States[wf.Initial] == nil {
				t.Fatal("valid workflow without its initial state")
			}
			return
		}
		probs, ok := err.(Problems)
		if !ok || len(probs) == 0 {
			t.Fatalf("error is not Problems: %v", err)
		}
		for _, p := range probs {
			if p.Pos.Line < 1 || p.Pos.Col < 1 {
				t.Fatalf("problem without position: %v", p)
			}
			if !utf8.ValidString(p.Msg) && utf8.Valid(data) {
				t.Fatalf("invalid UTF-8 in message from valid input: %q", p.Msg)
			}
		}
	})
}
