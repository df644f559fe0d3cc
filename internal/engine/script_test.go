package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/exitcode"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

// commandResult returns the result of the first step.completed at path.
func commandResult(t *testing.T, rep *Report, path string) (transcript.CommandResult, string) {
	t.Helper()
	ev := find(t, readAll(t, rep.TranscriptPath), transcript.StepCompleted, path)
	var cr transcript.CommandResult
	if err := transcript.DecodeResult(ev.Step().Result, &cr); err != nil {
		t.Fatal(err)
	}
	return cr, ev.Step().Error
}

// A script_file with a shebang runs as its own executable, so the kernel
// picks the interpreter whatever $SHELL is (AWF ADR 014); without one it
// runs with the shell. Its content is a template.
func TestScriptFileShebang(t *testing.T) {
	h := newHarness(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	h.e.Environ = append(os.Environ(), "SHELL=/bin/sh")
	h.write("scripts/bash.sh", "#!/bin/bash\necho \"bash:${BASH_VERSION:+yes} {{.inputs.who}}\"\n")
	h.write("scripts/plain.sh", "echo \"plain:${BASH_VERSION:-none} {{.inputs.who}}\"\n")
	h.write("scripts/env.sh", "#!/usr/bin/env sh\necho env-sh; exit 4\n")
	h.write("scripts/nointerp.sh", "#!/no/such/interpreter\necho never\n")
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	rep := h.run(context.Background(), `
name: sb
inputs: [{name: who, default: you}]
states:
  initial: bash
  bash: {type: step, script_file: scripts/bash.sh, on_success: plain}
  plain: {type: step, script_file: scripts/plain.sh, on_success: env}
  env: {type: step, script_file: scripts/env.sh, continue_on_error: true, on_success: missing}
  missing: {type: step, script_file: scripts/nointerp.sh}
`, nil)
	if rep.Status != "failure" || rep.ExitCode != exitcode.Execution || !strings.Contains(rep.Error, "interpreter /no/such/interpreter not found") {
		t.Fatalf("report %+v", rep)
	}
	if cr, _ := commandResult(t, rep, "bash"); cr.Output != "bash:yes you\n" {
		t.Errorf("bash script: %q", cr.Output)
	}
	if cr, _ := commandResult(t, rep, "plain"); cr.Output != "plain:none you\n" {
		t.Errorf("script without shebang: %q", cr.Output)
	}
	if cr, _ := commandResult(t, rep, "env"); cr.Output != "env-sh\n" || cr.ExitCode != 4 {
		t.Errorf("env shebang: %+v", cr)
	}
	if cr, msg := commandResult(t, rep, "missing"); cr.ExitCode != 127 || !strings.Contains(msg, "interpreter /no/such/interpreter not found") {
		t.Errorf("missing interpreter: %+v %q", cr, msg)
	}
	// step.started carries the resolved script
	if ev := find(t, readAll(t, rep.TranscriptPath), transcript.StepStarted, "bash"); !strings.HasPrefix(ev.Step().Command, "#!/bin/bash\necho \"bash:${BASH_VERSION:+yes} you\"") {
		t.Errorf("command %q", ev.Step().Command)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary scripts left behind: %v", left)
	}
}

// script_file and prompt_file are found where AWF finds them: beside the
// workflow, under ~ (then beside the workflow), and for paths under
// {{.awf.scripts_dir}} in the project's .awf/scripts (or .reel/scripts)
// before the global directory.
func TestStepFileResolution(t *testing.T) {
	h := newHarness(t)
	home := filepath.Join(h.dir, "home")
	config := filepath.Join(h.dir, "config")
	h.e.Environ = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+config)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", config)
	h.write("home/mine.sh", "echo from home")
	h.write("config/awf/scripts/global.sh", "echo global")
	h.write("config/awf/scripts/both.sh", "echo global both")
	h.write(".awf/scripts/both.sh", "echo local both")
	h.write(".awf/workflows/scripts/rel.sh", "echo relative")
	h.write(".awf/workflows/beside.sh", "echo beside")
	h.write("big.sh", strings.Repeat("#", maxStepFile+1))
	wf := h.load(".awf/workflows/files.yaml", fmt.Sprintf(`
name: files
states:
  initial: rel
  rel: {type: step, script_file: scripts/rel.sh, on_success: home}
  home: {type: step, script_file: ~/mine.sh, on_success: tilde}
  tilde: {type: step, script_file: ~/beside.sh, on_success: global}
  global: {type: step, script_file: '{{.awf.scripts_dir}}/global.sh', on_success: both}
  both: {type: step, script_file: '{{.awf.scripts_dir}}/both.sh', on_success: big}
  big: {type: step, script_file: %q}
`, filepath.Join(h.dir, "big.sh")))
	rep, err := h.e.Run(context.Background(), wf, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.verify()
	for path, want := range map[string]string{"rel": "relative\n", "home": "from home\n", "tilde": "beside\n", "global": "global\n", "both": "local both\n"} {
		if cr, msg := commandResult(t, rep, path); cr.Output != want {
			t.Errorf("%s: %q %s, want %q", path, cr.Output, msg, want)
		}
	}
	if _, msg := commandResult(t, rep, "big"); !strings.Contains(msg, "larger than the 1048576 byte limit") {
		t.Errorf("big script: %q", msg)
	}
}

// A script_file or prompt_file that cannot be read ends the run with exit
// status 1 (a user error), past on_failure and retries, when its state is
// at the top level, as in AWF; in a loop body or a parallel branch the
// state fails and the block handles it, as AWF's blocks do.
func TestUnreadableStepFileEndsTheRun(t *testing.T) {
	h := newHarness(t)
	h.write("scripts/ok.sh", "echo ok\n")
	h.write("scripts/directory.sh/x", "")
	for _, c := range []struct{ name, state, want string }{
		{"missing", "a: {type: step, script_file: scripts/none.sh, retry: {max_attempts: 3}, on_success: done, on_failure: handle}", "script_file: file not found"},
		{"directory", "a: {type: step, script_file: 'scripts/{{.workflow.Name}}.sh', on_success: done, on_failure: handle}", "is a directory"},
		{"templated", "a: {type: step, script_file: 'scripts/{{.workflow.Name}}.sh', on_success: done, on_failure: handle}", "script_file: file not found"},
		{"prompt", "a: {type: agent, provider: claude, prompt_file: 'prompts/{{.workflow.Name}}.md', on_success: done, on_failure: handle}", "prompt_file: file not found"},
	} {
		rep := h.run(context.Background(), `
name: `+c.name+`
states:
  initial: a
  `+c.state+`
  handle: {type: step, command: echo handled, on_success: done}
  done: {type: terminal}
`, nil)
		if rep.Status != "failure" || rep.ExitCode != exitcode.User || !strings.Contains(rep.Error, c.want) {
			t.Errorf("%s: report %+v", c.name, rep)
		}
		n := 0
		for _, ev := range readAll(t, rep.TranscriptPath) {
			if p := ev.Step(); p != nil && ev.Type == transcript.StepStarted {
				n++
				if p.Name != "a" {
					t.Errorf("%s: state %s ran", c.name, p.Name)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: %d attempts", c.name, n)
		}
	}
	rep := h.run(context.Background(), `
name: nested
states:
  initial: each
  each: {type: for_each, items: '["ok", "none"]', body: [b], on_complete: done, on_failure: handle}
  b: {type: step, script_file: 'scripts/{{.loop.Item}}.sh', on_success: each}
  handle: {type: step, command: echo handled, on_success: par}
  par: {type: parallel, parallel: [x, y], strategy: best_effort, on_success: done}
  x: {type: step, script_file: scripts/none.sh}
  y: {type: step, command: echo y}
  done: {type: terminal}
`, nil)
	if rep.Status != "success" {
		t.Fatalf("nested: report %+v\n%s", rep, h.display.String())
	}
	if cr, _ := commandResult(t, rep, "handle"); cr.Output != "handled\n" {
		t.Errorf("the loop's on_failure: %q", cr.Output)
	}
}

// AWF's script-file-shebang.yaml fixture runs with AWF's scripts where AWF
// finds them (beside the workflow).
func TestAWFScriptFileFixture(t *testing.T) {
	src := filepath.Join(testfixtures.Root(t), "awf", "fixtures")
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	h := newHarness(t)
	wfb, err := os.ReadFile(filepath.Join(src, "workflows", "script-file-shebang.yaml"))
	if err != nil {
		t.Skip(err)
	}
	for _, s := range []string{"shebang_python.py", "shebang_bash.sh", "no_shebang.sh"} {
		b, err := os.ReadFile(filepath.Join(src, "scripts", s))
		if err != nil {
			t.Fatal(err)
		}
		h.write(filepath.Join(".awf", "workflows", "scripts", s), string(b))
	}
	wf := h.load(".awf/workflows/script-file-shebang.yaml", string(wfb))
	rep, err := h.e.Run(context.Background(), wf, RunOptions{})
	if err != nil || rep.Status != "success" {
		t.Fatalf("%+v %v", rep, err)
	}
	h.verify()
	if cr, _ := commandResult(t, rep, "python_step"); !strings.HasPrefix(cr.Output, "python:3.") {
		t.Errorf("python: %q", cr.Output)
	}
	if cr, _ := commandResult(t, rep, "bash_step"); !strings.HasPrefix(cr.Output, "bash:") || cr.Output == "bash:\n" {
		t.Errorf("bash: %q", cr.Output)
	}
	if cr, _ := commandResult(t, rep, "no_shebang_step"); cr.Output != "no-shebang-executed\n" {
		t.Errorf("no shebang: %q", cr.Output)
	}
}

// prompt_file is read as AWF reads it, from {{.awf.prompts_dir}} with the
// project's .awf/prompts first, and resolved as a template.
func TestPromptFileFromAWFPrompts(t *testing.T) {
	fake, err := filepath.Abs("testdata/fake-claude")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	config := filepath.Join(h.dir, "config")
	h.e.Environ = append(os.Environ(), "XDG_CONFIG_HOME="+config)
	t.Setenv("XDG_CONFIG_HOME", config)
	h.write(".awf/prompts/review.md", "Review {{.inputs.file}} carefully.")
	h.write("config/awf/prompts/review.md", "the global one")
	wf := h.load(".awf/workflows/p.yaml", fmt.Sprintf(`
name: p
inputs: [{name: file, default: main.go}]
states:
  initial: review
  review:
    type: agent
    provider: claude
    prompt_file: '{{.awf.prompts_dir}}/review.md'
    options: {command: %q}
    capture: {stdout: verdict, max_size: 4}
`, fake))
	rep, err := h.e.Run(context.Background(), wf, RunOptions{})
	if err != nil || rep.Status != "success" {
		t.Fatalf("%+v %v", rep, err)
	}
	h.verify()
	ev := find(t, readAll(t, rep.TranscriptPath), transcript.MessageUser, "review")
	if m := ev.Message(); m == nil || m.Blocks[0].Text != "Review main.go carefully." {
		t.Fatalf("prompt %+v", ev.Payload)
	}
	// an agent step's capture keeps its reply
	done := find(t, readAll(t, rep.TranscriptPath), transcript.StepCompleted, "review")
	var ar transcript.AgentResult
	if err := transcript.DecodeResult(done.Step().Result, &ar); err != nil || ar.Captured["verdict"] != "LGTM" || ar.Usage.TotalTokens == 0 {
		t.Fatalf("agent result %+v %v", ar, err)
	}
}
