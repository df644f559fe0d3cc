package workflow

import (
	"strings"
	"testing"
	"time"
)

func TestHooksParse(t *testing.T) {
	wf, err := Parse([]byte(`
name: h
hooks:
  workflow_start:
    - command: echo start {{.inputs.x}}
    - log: "starting {{.workflow.Name}}"
  workflow_end: [{command: echo end, timeout: 3s}]
  workflow_error: [{log: "failed: {{.error.Message}}"}]
  workflow_cancel: [{command: echo cancelled}]
inputs: [{name: x}]
states:
  initial: a
  a:
    type: step
    command: echo a
    hooks:
      pre: [{command: echo pre}]
      post: [{log: done a}, {command: echo post}]
    capture: {stdout: out, stderr: err, max_size: 2KB, encoding: UTF-8}
    on_success: b
  b:
    type: step
    command: echo b
    pre_hook: {command: echo one, timeout: 2}
    post_hook:
      - command: echo two
`), "h.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := wf.Hooks
	if len(h.Start) != 2 || h.Start[0].Command == nil || h.Start[1].Log == nil || len(h.End) != 1 || h.End[0].Timeout != 3*time.Second ||
		len(h.Error) != 1 || len(h.Cancel) != 1 {
		t.Fatalf("workflow hooks %+v", h)
	}
	if len(h.Named()) != 4 {
		t.Fatalf("named %v", h.Named())
	}
	a := wf.States["a"]
	if len(a.Hooks.Pre) != 1 || len(a.Hooks.Post) != 2 || a.Hooks.Post[0].Log.Source != "done a" {
		t.Fatalf("a hooks %+v", a.Hooks)
	}
	if c := a.Capture; c.Stdout != "out" || c.Stderr != "err" || c.MaxSize != 2048 {
		t.Fatalf("capture %+v", c)
	}
	b := wf.States["b"]
	if len(b.Hooks.Pre) != 1 || b.Hooks.Pre[0].Timeout != 2*time.Second || len(b.Hooks.Post) != 1 || b.Hooks.Post[0].Command.Source != "echo two" {
		t.Fatalf("b hooks %+v", b.Hooks)
	}
	// hook templates are checked like any other: they are template sites
	n := 0
	for _, ts := range a.templateSites() {
		if strings.Contains(ts.t.Source, "post") && ts.site.What == "hooks.post" && ts.site.SelfOK {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("hook templates not listed: %d", n)
	}
}

func TestHookProblems(t *testing.T) {
	const states = "states:\n  initial: a\n  a: {type: step, command: 'true'}\n"
	for _, c := range []struct{ src, want string }{
		{"hooks: {workflow_begin: []}\n", `f.yaml:5:9: unknown field "workflow_begin" in the workflow's hooks (did you mean "workflow_end"?)`},
		{"hooks: {workflow_start: [{command: x, log: y}]}\n", "f.yaml:5:26: hooks.workflow_start entry needs exactly one of command or log"},
		{"hooks: {workflow_start: [{}]}\n", "f.yaml:5:26: hooks.workflow_start entry needs exactly one of command or log"},
		{"hooks: {workflow_start: [{log: y, timeout: 3}]}\n", "timeout applies to a command, not a log line"},
		{"hooks: {workflow_start: [{command: x, shell: bash}]}\n", `unknown field "shell" in a hook action`},
		{"hooks: {workflow_start: {command: x}}\n", "hooks.workflow_start must be a list, got a mapping"},
		{"hooks: {workflow_end: [{command: 'echo {{.states.nope.Output}}'}]}\n", `hooks.workflow_end: {{.states.nope.Output}}: unknown state "nope"`},
	} {
		_, err := Parse([]byte("name: x\n"+states+c.src), "f.yaml", Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
	_, err := Parse([]byte(`name: x
hooks: {workflow_start: [{command: x}]}
states:
  initial: a
  a: {type: step, command: 'true', on_success: workflow_start}
  workflow_start: {type: step, command: y}
`), "f.yaml", Options{})
	if err == nil || !strings.Contains(err.Error(), `f.yaml:6:3: state name "workflow_start" is the path the workflow's workflow_start hook is recorded at`) {
		t.Errorf("state named like a hook: %v", err)
	}
}

func TestStepHookProblems(t *testing.T) {
	for _, c := range []struct{ state, want string }{
		{"hooks: {pre: [{command: x}], before: []}", `unknown field "before" in hooks of state "a"`},
		{"hooks: {pre: [{command: x}]}, pre_hook: {command: y}", `state "a" sets its pre_hook twice (hooks.pre and pre_hook are the same hook; use one form)`},
		{"post_hook: echo", "post_hook must be a list, got the string"},
		{"pre_hook: {command: '{{.bad'}", "pre_hook command: bad template"},
	} {
		src := "name: x\nstates:\n  initial: a\n  a: {type: step, command: 'true', " + c.state + "}\n"
		_, err := Parse([]byte(src), "f.yaml", Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.state, err, c.want)
		}
	}
	// hooks belong to non-terminal states
	_, err := Parse([]byte("name: x\nstates:\n  initial: a\n  a: {type: terminal, hooks: {pre: [{command: x}]}}\n"), "f.yaml", Options{})
	if err == nil || !strings.Contains(err.Error(), `field "hooks" is not valid in terminal state "a" (it belongs to non-terminal states)`) {
		t.Errorf("terminal hooks: %v", err)
	}
	// a child named pre_hook under a hooked loop would share the hook's path
	_, err = Parse([]byte(`name: x
states:
  initial: each
  each: {type: for_each, items: [1], body: [pre_hook], hooks: {pre: [{command: x}]}}
  pre_hook: {type: step, command: 'true'}
`), "f.yaml", Options{})
	if err == nil || !strings.Contains(err.Error(), `f.yaml:5:3: state "pre_hook" runs inside "each", whose hooks are recorded at each.pre_hook`) {
		t.Errorf("reserved child name: %v", err)
	}
}

func TestCaptureProblems(t *testing.T) {
	for _, c := range []struct{ capture, want string }{
		{"{stdout: out, max_size: 10MB}", ""},
		{"{stdout: out, max_size: 1MiB}", ""},
		{"{stdout: out, max_size: 512}", ""},
		{"{}", "capture names no variable"},
		{"{stdout: a, stderr: a}", `capture stores stdout and stderr under the same name "a"`},
		{"{stdout: 'my var'}", `capture.stdout: "my var" is not a variable name`},
		{"{stdout: x, max_size: 10XB}", `capture.max_size: "10XB" is not a size`},
		{"{stdout: x, max_size: 0}", "capture.max_size must be more than 0 bytes"},
		{"{stdout: x, max_size: 99999999999999TB}", "is too large"},
		{"{stdout: x, encoding: latin1}", `capture.encoding "latin1" is not supported`},
		{"{stdout: x, trim: true}", `unknown field "trim" in capture`},
	} {
		src := "name: x\nstates:\n  initial: a\n  a: {type: step, command: 'true', capture: " + c.capture + "}\n"
		_, err := Parse([]byte(src), "f.yaml", Options{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.capture, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.capture, err, c.want)
		}
	}
	wf, err := Parse([]byte("name: x\nstates:\n  initial: a\n  a: {type: parallel, parallel: [b], capture: {stdout: x}}\n  b: {type: step, command: 'true'}\n"), "f.yaml", Options{})
	if err != nil || len(wf.Warnings) != 1 || !strings.Contains(wf.Warnings[0].Msg, `"capture" is ignored: it belongs to step, agent, operation states`) {
		t.Errorf("capture on parallel: %v %v", err, wf)
	}
	// a terminal state takes no other type's field
	_, err = Parse([]byte("name: x\nstates:\n  initial: a\n  a: {type: terminal, command: 'true'}\n"), "f.yaml", Options{})
	if err == nil || !strings.Contains(err.Error(), `field "command" is not valid in terminal state "a" (it belongs to step)`) {
		t.Errorf("command on terminal: %v", err)
	}
}

func TestCaptured(t *testing.T) {
	c := &Capture{Stdout: "out", Stderr: "err", MaxSize: 4}
	got := c.Captured("héllo", "e")
	// 4 bytes would split é (2 bytes at 1..2)? "hél" is 4 bytes: h, é(2), l
	if got["out"] != "hél" || got["err"] != "e" {
		t.Fatalf("%q", got)
	}
	if got := (&Capture{Stdout: "o", MaxSize: 2}).Captured("hé", ""); got["o"] != "h" {
		t.Fatalf("cut inside a rune: %q", got)
	}
	if (*Capture)(nil).Captured("x", "y") != nil {
		t.Fatal("nil capture")
	}
}

// testdata/awf-ext.yaml holds every form of hooks, capture and operation.
func TestAWFExtensionsFile(t *testing.T) {
	wf, err := Load("testdata/awf-ext.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(wf.Hooks.Named()) != 4 || wf.States["fetch"].Capture.MaxSize != 64<<10 || wf.States["build"].Hooks.Pre[0].Timeout != 10*time.Second ||
		wf.States["label"].Inputs["operations"].([]any)[1].(map[string]any)["inputs"] == nil {
		t.Fatalf("%+v", wf)
	}
}

// An alias bomb deeper than the depth limit is one problem, quickly (it
// was one problem per leaf, which stalled the fuzzer).
func TestDeepAliasBombIsOneProblem(t *testing.T) {
	start := time.Now()
	_, err := Parse([]byte("ame: x\nstates:\n  initial: a\n  a: {type: foo, config: &c {k: [*c, *c, *c]}}\n"), "f.yaml", Options{})
	if n := strings.Count(err.Error(), "nested more than"); n != 1 {
		t.Fatalf("%d depth problems", n)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s", d)
	}
}
