package workflow

import (
	"strings"
	"testing"
)

// findings parses src and returns its problems and warnings, one string
// each.
func findings(t *testing.T, src string) (errs, warns []string) {
	t.Helper()
	wf, err := Parse([]byte(src), "f.yaml", Options{})
	var all Problems
	switch e := err.(type) {
	case nil:
		all = wf.Warnings
	case Problems:
		all = e
	default:
		t.Fatalf("parse: %v", err)
	}
	for _, p := range all {
		if p.Warning {
			warns = append(warns, p.String())
		} else {
			errs = append(errs, p.String())
		}
	}
	return errs, warns
}

const refsBase = `name: refs
inputs:
  - name: who
states:
  initial: first
  first:
    type: step
    command: echo first
    on_success: each
  each:
    type: for_each
    items: '["a"]'
    body: [inner, later]
    on_complete: fan
  inner:
    type: step
    command: %q
    on_success: each
  later:
    type: step
    command: echo later
    on_success: each
  fan:
    type: parallel
    parallel: [left, right]
    on_success: last
  left:
    type: step
    command: %q
  right:
    type: step
    command: echo right
  last:
    type: step
    command: %q
    transitions:
      - when: %q
        goto: done
    on_success: done
  done:
    type: terminal
    message: %q
`

// TestReferenceChecks: every reference that cannot resolve is reported
// with its position, as a problem in the fields AWF's validate checks and
// as a warning in the others; references that resolve are silent.
func TestReferenceChecks(t *testing.T) {
	type want struct{ errs, warns []string }
	ok := want{}
	for _, c := range []struct {
		name                         string
		inner, left, last, when, msg string
		want                         want
	}{
		{name: "all resolve",
			inner: "{{.inputs.who}} {{inputs.who}} {{.states.first.Output}} {{.states.later.ExitCode}} {{.loop.Item}} {{loop.Index1}} {{.workflow.ID}} {{.env.HOME}} {{.context.User}} {{.awf.scripts_dir}}",
			left:  "{{.states.each.Output}} {{workflow.Duration}} {{.states.each.Data.iterations}}",
			last:  "{{.states.left.Output}} {{.states.fan.Status}} {{range .states.first.JSON}}{{.anything}}{{end}} {{index .states \"first\" \"Output\"}}",
			when:  `states.last.ExitCode == 0 && trim(states.first.Output) == "first" && inputs.who != nil`,
			msg:   "{{.states.last.Output}}", want: ok},
		{name: "undefined input", inner: "{{.inputs.whom}}",
			want: want{errs: []string{`f.yaml:17:14: state "inner" command: {{.inputs.whom}}: undefined input "whom" (did you mean "who"?)`}}},
		{name: "dot-less undefined input", inner: "{{inputs.nope}}",
			want: want{errs: []string{`state "inner" command: {{.inputs.nope}}: undefined input "nope"`}}},
		{name: "lowercase property", last: "{{states.first.output}}",
			want: want{errs: []string{`state "last" command: {{.states.first.output}}: a state has no property "output"; use "Output" (AWF's names are case-sensitive)`}}},
		{name: "unknown property", last: "{{.states.first.Outptu}}",
			want: want{errs: []string{`a state has no property "Outptu" (one of Output, Stderr, ExitCode, Status, Error, Response, JSON, Data, TokensUsed, TokensInput, TokensOutput, TokensEstimated, Conversation) (did you mean "Output"?)`}}},
		{name: "own output", last: "{{.states.last.Output}}",
			want: want{errs: []string{`state "last" command: {{.states.last.Output}}: a state cannot read its own result before it has run`}}},
		{name: "later state", inner: "{{.states.fan.Output}}",
			want: want{errs: []string{`state "inner" command: {{.states.fan.Output}}: state "fan" cannot have run before "inner"`}}},
		{name: "unknown state", inner: "{{.states.frist.Output}}",
			want: want{errs: []string{`unknown state "frist" (did you mean "first"?)`}}},
		{name: "sibling branch", left: "{{.states.right.Output}}",
			want: want{warns: []string{`state "left" command: {{.states.right.Output}}: parallel branches "left" and "right" run at the same time; "right" may not have finished`}}},
		{name: "loop outside a loop", last: "{{.loop.Item}}",
			want: want{warns: []string{`.loop is only set in the body of a for_each or while loop, and "last" is in none: this fails when the state runs`}}},
		{name: "loop property case", inner: "{{loop.item}} {{.loop.Parent.nope}}",
			want: want{errs: []string{`{{.loop.item}}: .loop has no property "item"; use "Item"`, `{{.loop.Parent.nope}}: .loop has no property "nope"`}}},
		{name: "error outside a hook", last: "{{error.Message}}",
			want: want{errs: []string{`{{.error.Message}}: .error is only set in a workflow_error hook`}}},
		{name: "workflow id", last: "{{.workflow.id}} {{.workflow.run_id}}",
			want: want{errs: []string{`.workflow has no property "id"; use "ID"`, `.workflow has no property "run_id"; use "ID"`}}},
		{name: "context case", last: "{{context.working_dir}}",
			want: want{errs: []string{`.context has no property "working_dir"; use "WorkingDir"`}}},
		{name: "awf key", last: "{{.awf.script_dir}}",
			want: want{errs: []string{`.awf has no key "script_dir" (one of config_dir, data_dir, cache_dir, prompts_dir, scripts_dir, skills_dir, roles_dir, workflows_dir, plugins_dir, pack_name) (did you mean "scripts_dir"?)`}}},
		{name: "unknown namespace", last: "{{.input.who}}",
			want: want{errs: []string{`unknown namespace "input" (one of inputs, states, workflow, env, context, error, loop, awf, turn) (did you mean "inputs"?)`}}},
		{name: "lenient fields warn", when: "states.frist.Output == 'x'", msg: "{{.states.first.output}}",
			want: want{warns: []string{
				`state "last" transition: states.frist.Output: unknown state "frist" (did you mean "first"?): the condition is always false`,
				`state "done" message: {{.states.first.output}}: a state has no property "output"; use "Output" (AWF's names are case-sensitive): rendering it fails`}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			def := func(s, d string) string {
				if s == "" {
					return d
				}
				return s
			}
			src := refsBaseFilled(def(c.inner, "echo inner"), def(c.left, "echo left"), def(c.last, "echo last"), def(c.when, "true"), def(c.msg, "bye"))
			errs, warns := findings(t, src)
			check := func(kind string, got, want []string) {
				if len(got) != len(want) {
					t.Fatalf("%s:\n%s\nwant %d:\n%s", kind, strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
				}
				for i := range want {
					if !strings.Contains(got[i], want[i]) {
						t.Errorf("%s %d:\n got %s\nwant …%s…", kind, i, got[i], want[i])
					}
				}
			}
			check("problems", errs, c.want.errs)
			check("warnings", warns, c.want.warns)
		})
	}
}

// refsBaseFilled fills refsBase, quoting each value as a YAML single-quoted
// string.
func refsBaseFilled(vals ...string) string {
	s := refsBase
	for _, v := range vals {
		s = strings.Replace(s, "%q", "'"+strings.ReplaceAll(v, "'", "''")+"'", 1)
	}
	return s
}

// Fields AWF loads without acting on them load in reel too, each with a
// warning that says it does nothing; AWF's spellings of types load.
func TestAWFOnlyFieldsWarn(t *testing.T) {
	src := `name: w
author: me
tags: [a, b]
env: [HOME, BAD-NAME]
monitoring: {enabled: true}
inputs:
  - name: email
    pattern: "^x$"
  - name: req
    required: true
    default: d
states:
  initial: a
  a:
    type: Command
    operation: shell
    when: 'false'
    loop: {over: '[1]'}
    depends_on: [b, ghost]
    command: echo
    on_success: b
  b:
    type: STEP
    operation: docker
    command: echo
`
	errs, warns := findings(t, src)
	if len(errs) != 1 || !strings.Contains(errs[0], `f.yaml:4:13: env: "BAD-NAME" is not an environment variable name`) {
		t.Fatalf("problems %v", errs)
	}
	for _, w := range []string{
		`f.yaml:5:1: warning: "monitoring" is ignored: AWF documents it but does not implement it`,
		`f.yaml:8:5: warning: input "email": "pattern" is ignored here; validation rules go under validation:`,
		`f.yaml:11:14: warning: input "req" is required, so its default is never used`,
		`f.yaml:14:3: warning: state "a" depends_on: unknown state "ghost"`,
		`f.yaml:17:5: warning: step state "a": "when" is ignored: AWF ignores a state's when (the state always runs)`,
		`f.yaml:18:5: warning: step state "a": "loop" is ignored: AWF ignores a state's loop (the state runs once)`,
		`f.yaml:24:16: warning: step state "b": operation "docker" is ignored on a step`,
	} {
		found := false
		for _, g := range warns {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("no warning %q in\n%s", w, strings.Join(warns, "\n"))
		}
	}
	if len(warns) != 7 {
		t.Errorf("%d warnings:\n%s", len(warns), strings.Join(warns, "\n"))
	}
	wf, err := Parse([]byte(strings.Replace(src, ", BAD-NAME", "", 1)), "f.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if wf.Author != "me" || len(wf.Tags) != 2 || len(wf.Env) != 1 || wf.States["a"].Type != TypeStep || wf.States["b"].Type != TypeStep || len(wf.States["a"].DependsOn) != 2 {
		t.Errorf("loaded %+v a %+v", wf, wf.States["a"])
	}
}

func TestInputTypesAndDefaults(t *testing.T) {
	wf, err := Parse([]byte(`name: i
inputs:
  - {name: files, type: array, default: [a.go, b.go]}
  - {name: ratio, type: number, default: 0.5}
  - {name: on, type: boolean, default: yes}
  - {name: conf, validation: {file_extension: [.yaml, .yml]}}
states:
  initial: x
  x: {type: terminal}
`), "f.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if *wf.Inputs[0].Default != `["a.go","b.go"]` || *wf.Inputs[1].Default != "0.5" || len(wf.Inputs[3].Validation.FileExtension) != 2 {
		t.Errorf("inputs %+v", wf.Inputs)
	}
	for _, c := range []struct{ src, want string }{
		{"  - {name: n, type: integer, default: [1]}\n", "f.yaml:3:39: default must be a scalar, got a list"},
		{"  - {name: n, type: integer, default: x}\n", `f.yaml:3:39: default of input "n": "x" is not an integer`},
		{"  - {name: n, type: array, default: '[oops'}\n", `default of input "n": "[oops" is not a JSON array`},
		{"  - {name: n, type: integer, validation: {min: 5, max: 1}}\n", "validation: min 5 is above max 1"},
	} {
		_, err := Parse([]byte("name: i\ninputs:\n"+c.src+"states:\n  initial: x\n  x: {type: terminal}\n"), "f.yaml", Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.src, err, c.want)
		}
	}
}

func TestMaxIterationsForms(t *testing.T) {
	base := "name: m\ninputs: [{name: n, type: integer}]\nstates:\n  initial: l\n  l: {type: while, while: 'true', body: [b], max_iterations: %s}\n  b: {type: step, command: echo}\n"
	wf, err := Parse([]byte(strings.Replace(base, "%s", `"{{.inputs.n}} * 2"`, 1)), "f.yaml", Options{})
	if err != nil || wf.States["l"].MaxIterationsExpr == nil {
		t.Fatalf("templated: %v", err)
	}
	wf, err = Parse([]byte(strings.Replace(base, "%s", `"25"`, 1)), "f.yaml", Options{})
	if err != nil || wf.States["l"].MaxIterations != 25 || wf.States["l"].MaxIterationsExpr != nil {
		t.Fatalf("quoted number: %v", err)
	}
	for v, want := range map[string]string{
		`"{{.inputs.m}}"`: `undefined input "m"`,
		`"lots"`:          `max_iterations must be an integer or a template`,
		`"{{.inputs.n"`:   `max_iterations: bad template`,
	} {
		if _, err := Parse([]byte(strings.Replace(base, "%s", v, 1)), "f.yaml", Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", v, err, want)
		}
	}
}

func TestExprSemantics(t *testing.T) {
	compile := func(src string) *Expr {
		p, err := compileExpr(src, true)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		return &Expr{Source: src, prog: p}
	}
	env := map[string]any{NSStates: map[string]any{"ran": map[string]any{"Output": "all PASSED\n", "ExitCode": 0}}, NSInputs: map[string]any{}}
	for src, want := range map[string]bool{
		`contains(states.ran.Output, "PASSED")`:                  true,
		`has_prefix(states.ran.Output, "all")`:                   true,
		`has_suffix(trim(states.ran.Output), "ED")`:              true,
		`states.later.ExitCode == 0`:                             false, // not run yet: false, not an error
		`states.later.ExitCode != 0`:                             false,
		`states.ran.ExitCode == 0 or states.later.Output == "x"`: true,
	} {
		got, err := compile(src).True(env)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
	if _, err := compile(`states.ran.Output > 3`).True(env); err == nil {
		t.Error("a type error on a state that ran is an error")
	}
	if _, err := compileExpr("nosuch == 1", true); err == nil {
		t.Error("an unknown variable compiles")
	}
}

// TestLoopConditionsReadTheirIteration: a loop's while and break_when are
// evaluated in each iteration, with its .loop, as in AWF: reading it there
// is no finding, so validate --strict accepts the file.
func TestLoopConditionsReadTheirIteration(t *testing.T) {
	src := `name: loops
states:
  initial: each
  each:
    type: for_each
    items: '["a", "stop", "c"]'
    body: [show]
    break_when: loop.Item == "stop" || loop.Index >= 5
    on_complete: again
  show:
    type: step
    command: echo {{.loop.Item}}
    on_success: each
  again:
    type: while
    while: loop.Index < 3 && !loop.Last
    break_when: loop.Index1 == 2
    body: [tick]
    on_complete: done
  tick:
    type: step
    command: echo tick
    on_success: again
  done:
    type: terminal
`
	errs, warns := findings(t, src)
	if len(errs)+len(warns) > 0 {
		t.Fatalf("problems %q, warnings %q", errs, warns)
	}
	// .loop in another field of the loop state is still outside the loop
	errs, warns = findings(t, strings.Replace(src, "items: '[\"a\", \"stop\", \"c\"]'", "items: '{{.loop.Item}}'", 1))
	if len(errs)+len(warns) != 1 {
		t.Fatalf(".loop in items: problems %q, warnings %q", errs, warns)
	}
}

// TestEmptyWhenIsTheDefaultBranch: a transition whose when is empty or null
// always matches, as AWF's default branch does; one of blanks is refused.
func TestEmptyWhenIsTheDefaultBranch(t *testing.T) {
	for _, when := range []string{`""`, `''`, ``, `null`, `~`} {
		src := `name: w
states:
  initial: a
  a:
    type: step
    command: echo a
    transitions:
      - when: inputs.x == "1"
        goto: done
      - when: ` + when + `
        goto: b
  b:
    type: step
    command: echo b
    on_success: done
  done:
    type: terminal
inputs:
  - name: x
`
		wf, err := Parse([]byte(src), "f.yaml", Options{})
		if err != nil {
			t.Fatalf("when: %s: %v", when, err)
		}
		tr := wf.States["a"].Transitions
		if len(tr) != 2 || tr[0].When == nil || tr[1].When != nil || tr[1].Goto != "b" {
			t.Errorf("when: %s: transitions %+v", when, tr)
		}
	}
	errs, _ := findings(t, "name: w\nstates:\n  initial: a\n  a:\n    type: step\n    command: echo\n    transitions:\n      - when: ' '\n        goto: done\n  done:\n    type: terminal\n")
	if len(errs) != 1 || !strings.Contains(errs[0], "when is empty") {
		t.Errorf("a blank when: %q", errs)
	}
}
