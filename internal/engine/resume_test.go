package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// cutWorkflow exercises what a resume must get right: a loop whose body
// reads the previous step, a while loop, a parallel block with a failing
// continue_on_error branch, retries, a transition cycle and a sub-workflow.
const cutWorkflow = `
name: cut
inputs: [{name: n, type: integer, default: "2"}]
outputs:
  - {name: all, from: 'states.gather.Output'}
states:
  initial: prep
  prep: {type: step, command: 'echo prep', on_success: each}
  each: {type: for_each, items: '["a","b","c"]', body: [one, two], on_complete: spin}
  one: {type: step, command: 'echo one-{{.loop.Item}}'}
  two: {type: step, command: 'echo two-{{trimSpace .states.one.Output}}'}
  spin: {type: while, while: 'loop.Index < inputs.n', body: [tick], on_complete: fan}
  tick: {type: step, command: 'echo tick{{.loop.Index}}'}
  fan: {type: parallel, parallel: [ok, bad], on_success: flaky}
  ok: {type: step, command: 'echo ok'}
  bad: {type: step, command: 'echo bad; exit 3', continue_on_error: true}
  flaky:
    type: step
    command: 'n=$(cat {{.inputs.dir}}/flaky 2>/dev/null || echo 0); echo $((n+1)) > {{.inputs.dir}}/flaky; [ $n -ge 1 ] && echo flaky-ok'
    retry: {max_attempts: 3}
    on_success: count
  count:
    type: step
    command: 'echo x >> {{.inputs.dir}}/count; wc -l < {{.inputs.dir}}/count | tr -d " "'
    transitions:
      - {when: 'int(trim(states.count.Output)) % 3 != 0', goto: count}
      - {goto: sub}
  sub: {type: call_workflow, workflow: cutchild, inputs: {v: '{{trimSpace .states.two.Output}}'}, on_success: gather}
  gather:
    type: step
    command: 'echo {{trimSpace .states.prep.Output}} {{trimSpace .states.two.Output}} {{trimSpace .states.tick.Output}} {{trimSpace .states.ok.Output}} {{.states.bad.Status}} {{trimSpace .states.flaky.Output}} {{trimSpace .states.count.Output}} {{.states.sub.Data.r}}'
`

const cutChild = `
name: cutchild
inputs: [{name: v, required: true}]
outputs: [{name: r, from: 'states.c2.Output'}]
states:
  initial: c1
  c1: {type: step, command: 'echo c1', on_success: c2}
  c2: {type: step, command: 'echo {{.inputs.v}}-{{trimSpace .states.c1.Output}}'}
`

// lines of a transcript file.
func fileLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

// A run cut after any line of its transcript, as a crash would leave it,
// resumes to the outputs of the run that was not cut, and every transcript
// it leaves passes verify.
func TestResumeFromEveryCut(t *testing.T) {
	h := newHarness(t)
	h.write("cutchild.yaml", cutChild)
	// The flaky and count steps keep state in files: a resume that runs a
	// kept step again, or loses one, changes the outputs.
	state := filepath.Join(h.dir, "state")
	os.MkdirAll(state, 0o755)
	body := strings.ReplaceAll(cutWorkflow, "{{.inputs.dir}}", state)
	wf := h.load("wf.yaml", body)
	ref, err := h.e.Run(context.Background(), wf, RunOptions{})
	if err != nil || ref.Status != "success" {
		t.Fatalf("reference: %v %+v", err, ref)
	}
	want := ref.Outputs
	if want["all"] != "prep two-one-c tick1 ok failed flaky-ok 3 two-one-c-c1\n" {
		t.Fatalf("reference outputs %v", want)
	}
	lines := fileLines(t, ref.TranscriptPath)
	stateFiles := func(dir string) map[string][]byte {
		m := map[string][]byte{}
		for _, f := range []string{"flaky", "count"} {
			b, _ := os.ReadFile(filepath.Join(dir, f))
			m[f] = b
		}
		return m
	}
	refState := stateFiles(state)
	// The child's transcript, and where in the parent its call starts.
	var childID string
	var callAt int
	for i, l := range lines {
		ev, _ := transcript.DecodeEvent(bytes.TrimSpace(l))
		if ev.Type == transcript.CallWorkflowStarted {
			childID, callAt = ev.ChildRunID, i
		}
	}
	childLines := fileLines(t, filepath.Join(transcript.Dir(h.storage), childID+".jsonl"))

	for cut := 1; cut < len(lines)-1; cut++ {
		dir := t.TempDir()
		storage := filepath.Join(dir, "storage")
		tdir := transcript.Dir(storage)
		os.MkdirAll(tdir, 0o700)
		write := func(name string, ls [][]byte) {
			if err := os.WriteFile(filepath.Join(tdir, name), bytes.Join(ls, nil), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write(ref.RunID+".jsonl", lines[:cut])
		switch {
		case cut > callAt+1:
			// the child ran while the parent's call was open: cut it too
			k := min(len(childLines), (cut-callAt)*len(childLines)/max(len(lines)-callAt-4, 1)+1)
			write(childID+".jsonl", childLines[:k])
		case cut == callAt+1:
			write(childID+".jsonl", nil) // created, nothing written yet
		}
		rec, err := rerun.Load(filepath.Join(tdir, ref.RunID+".jsonl"), rerun.Options{})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if rec.Status != runstatus.Interrupted {
			t.Fatalf("cut %d: status %s", cut, rec.Status)
		}
		// The files the steps keep their state in, as the executions that
		// completed before the cut left them (one cut short did nothing),
		// in the same directory as the reference run's: it is part of the
		// steps' commands, which a resume checks for changes.
		setState(t, state, lines[:cut])
		e := &Engine{Storage: storage, ProjectDir: h.dir}
		rep, err := e.Resume(context.Background(), wf, rec, ResumeOptions{})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if rep.Status != "success" || !reflect.DeepEqual(rep.Outputs, want) {
			t.Fatalf("cut %d: %s %s, outputs %v, want %v", cut, rep.Status, rep.Error, rep.Outputs, want)
		}
		if got := stateFiles(state); !reflect.DeepEqual(got, refState) {
			t.Fatalf("cut %d: steps ran again or not at all: %q, want %q", cut, got, refState)
		}
		vr := verify.Paths([]string{storage}, verify.Options{})
		if vr.Violations() > 0 || len(vr.Unreadable) > 0 {
			t.Fatalf("cut %d: verify: %v %v", cut, vr.Problems, vr.Unreadable)
		}
		if cut%5 != 0 {
			continue
		}
		// Cut the resumed attempt too, and resume again: the third
		// attempt stands on what the second kept and did.
		path := filepath.Join(tdir, ref.RunID+".jsonl")
		all := fileLines(t, path)
		second := 0
		for i, l := range all {
			if ev, _ := transcript.DecodeEvent(bytes.TrimSpace(l)); ev.Type == transcript.RunStarted && i > 0 {
				second = i
			}
		}
		for _, cut2 := range []int{second + 1, (second + len(all)) / 2, len(all) - 3} {
			if cut2 <= second || cut2 >= len(all)-1 {
				continue
			}
			os.WriteFile(path, bytes.Join(all[:cut2], nil), 0o600)
			orphanChildren(t, tdir, all[:cut2], ref.RunID)
			setState(t, state, all[:cut2])
			rec, err := rerun.Load(path, rerun.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := e.Resume(context.Background(), wf, rec, ResumeOptions{})
			if err != nil || rep.Attempt != 3 || !reflect.DeepEqual(rep.Outputs, want) {
				t.Fatalf("cut %d then %d: %v attempt %d outputs %v", cut, cut2, err, rep.Attempt, rep.Outputs)
			}
			if got := stateFiles(state); !reflect.DeepEqual(got, refState) {
				t.Fatalf("cut %d then %d: %q, want %q", cut, cut2, got, refState)
			}
			if vr := verify.Paths([]string{storage}, verify.Options{}); vr.Violations() > 0 {
				t.Fatalf("cut %d then %d: verify: %v", cut, cut2, vr.Problems)
			}
			os.WriteFile(path, bytes.Join(all, nil), 0o600)
		}
	}
}

// setState writes the step-state files as the step executions completed
// in lines (every attempt's) left them.
func setState(t *testing.T, dir string, lines [][]byte) {
	t.Helper()
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	done := map[string]int{}
	for _, l := range lines {
		if ev, _ := transcript.DecodeEvent(bytes.TrimSpace(l)); ev.Type == transcript.StepCompleted {
			done[ev.Path]++
		}
	}
	if n := done["flaky"]; n > 0 {
		os.WriteFile(filepath.Join(dir, "flaky"), []byte(strconv.Itoa(n)+"\n"), 0o644)
	}
	if n := done["count"]; n > 0 {
		os.WriteFile(filepath.Join(dir, "count"), bytes.Repeat([]byte("x\n"), n), 0o644)
	}
}

// orphanChildren empties the child transcripts the cut parent never
// called: a child is created just before its call is recorded, so a crash
// can leave one empty, never one with events.
func orphanChildren(t *testing.T, tdir string, lines [][]byte, parent string) {
	t.Helper()
	called := map[string]bool{}
	for _, l := range lines {
		if ev, _ := transcript.DecodeEvent(bytes.TrimSpace(l)); ev.ChildRunID != "" {
			called[ev.ChildRunID] = true
		}
	}
	entries, _ := os.ReadDir(tdir)
	for _, e := range entries {
		id := strings.TrimSuffix(e.Name(), ".jsonl")
		if id != parent && !called[id] {
			os.WriteFile(filepath.Join(tdir, e.Name()), nil, 0o600)
		}
	}
}

// A resume refuses a kept step that changed or became another kind, and
// --from runs it again.
func TestResumeRefusesChangedSteps(t *testing.T) {
	h := newHarness(t)
	h.e.Register("stamp", func(context.Context, StepRequest) (StepResult, error) { return StepResult{Output: "s"}, nil })
	body := "name: ch\nstates:\n  initial: a\n  a: {type: step, command: 'echo a', on_success: b}\n  b: {type: step, command: 'exit 1'}\n"
	rep := h.run(context.Background(), body, nil)
	rec, err := rerun.Load(rep.TranscriptPath, rerun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ body, want string }{
		{strings.Replace(body, "echo a", "echo A", 1), "state a changed since attempt 1 ran it"},
		{strings.Replace(body, "{type: step, command: 'echo a', on_success: b}", "{type: stamp, on_success: b}", 1), "state a ran as a command step and is now a stamp step"},
	} {
		wf := h.load("wf.yaml", c.body)
		_, err := h.e.Resume(context.Background(), wf, rec, ResumeOptions{})
		var re *ResumeError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v, want %q", err, c.want)
		}
	}
	// a changed flow is followed; a fixed failing step runs again
	fixed := strings.Replace(body, "exit 1", "echo b", 1)
	fixed = strings.Replace(fixed, "on_success: b}", "on_success: n}\n  n: {type: step, command: 'echo new', on_success: b}", 1)
	h.display.Reset()
	rep2, err := h.e.Resume(context.Background(), h.load("wf.yaml", fixed), rec, ResumeOptions{})
	if err != nil || rep2.Status != "success" || rep2.Attempt != 2 {
		t.Fatalf("%v %+v", err, rep2)
	}
	if d := h.display.String(); !strings.Contains(d, "↷ a (success in attempt 1, kept)") || !strings.Contains(d, "n │ new") {
		t.Fatalf("display:\n%s", d)
	}
	h.verify()
}

// Masked inputs cannot be resumed without being given again.
func TestResumeMaskedInput(t *testing.T) {
	h := newHarness(t)
	t.Setenv("API_TOKEN", "tok-1234567890abcdef")
	h.e.Masker = secrets.NewMasker([]string{"API_TOKEN=tok-1234567890abcdef"})
	body := "name: m\ninputs: [{name: tok}]\nstates:\n  initial: a\n  a: {type: step, command: 'exit 1'}\n"
	rep := h.run(context.Background(), body, map[string]string{"tok": "tok-1234567890abcdef"})
	rec, _ := rerun.Load(rep.TranscriptPath, rerun.Options{})
	wf := h.load("wf.yaml", body)
	_, err := h.e.Resume(context.Background(), wf, rec, ResumeOptions{})
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), `input "tok" was masked`) {
		t.Fatalf("%v", err)
	}
	if _, err := h.e.Resume(context.Background(), wf, rec, ResumeOptions{Inputs: map[string]string{"tok": "x"}}); err != nil {
		t.Fatal(err)
	}
}

// docs/decisions.md §11 and docs/lifecycle.md: a resume runs the workflow's hooks
// again (workflow_start, then workflow_end or workflow_error), but not the
// pre and post hooks of the steps it keeps, nor the hooks of a kept
// sub-workflow; a kept step's captured output and a kept sub-workflow's
// outputs feed the steps that run after the resume.
func TestResumeWithHooksCaptureAndSubWorkflow(t *testing.T) {
	h, logf := hookHarness(t)
	h.write("hookchild.yaml", `
name: hookchild
hooks:
  workflow_start: [{command: 'echo CHILD_START >> {{.env.HOOK_LOG_FILE}}'}]
  workflow_end: [{command: 'echo CHILD_END >> {{.env.HOOK_LOG_FILE}}'}]
outputs: [{name: r, from: 'trim(states.c.Output)'}]
states:
  initial: c
  c: {type: step, command: 'echo child-ran >> {{.env.HOOK_LOG_FILE}}; echo from-child'}
`)
	fixed := filepath.Join(h.dir, "fixed")
	body := `
name: hooked
hooks:
  workflow_start: [{command: 'echo START >> {{.env.HOOK_LOG_FILE}}'}]
  workflow_end: [{command: 'echo END >> {{.env.HOOK_LOG_FILE}}'}]
  workflow_error: [{command: 'echo ERROR >> {{.env.HOOK_LOG_FILE}}'}]
outputs: [{name: all, from: 'trim(states.last.Output)'}]
states:
  initial: each
  each: {type: for_each, items: '["a","b"]', body: [item], on_complete: sub}
  item:
    type: step
    command: 'echo item-{{.loop.Item}} >> {{.env.HOOK_LOG_FILE}}; printf word-{{.loop.Item}}'
    capture: {stdout: word}
    pre_hook: {command: 'echo PRE_{{.loop.Item}} >> {{.env.HOOK_LOG_FILE}}'}
    post_hook: {command: 'echo POST_{{.loop.Item}} >> {{.env.HOOK_LOG_FILE}}'}
  sub: {type: call_workflow, workflow: hookchild, on_success: gate}
  gate:
    type: step
    command: 'test -e ` + fixed + `'
    pre_hook: {command: 'echo PRE_GATE >> {{.env.HOOK_LOG_FILE}}'}
    on_success: last
  last: {type: step, command: 'echo {{.states.item.Output}} {{.states.sub.Data.r}}'}
`
	rep := h.run(context.Background(), body, nil)
	if rep.Status != "failure" {
		t.Fatalf("first attempt: %+v", rep)
	}
	first := "START\nPRE_a\nitem-a\nPOST_a\nPRE_b\nitem-b\nPOST_b\nCHILD_START\nchild-ran\nCHILD_END\nPRE_GATE\nERROR\n"
	if got := readLog(t, logf); got != first {
		t.Fatalf("first attempt's hooks:\n%s\nwant\n%s", got, first)
	}
	if err := os.WriteFile(fixed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := rerun.Load(rep.TranscriptPath, rerun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := h.e.Resume(context.Background(), h.load("wf.yaml", body), rec, ResumeOptions{})
	if err != nil || rep2.Status != "success" || rep2.Attempt != 2 {
		t.Fatalf("resume: %v %+v\n%s", err, rep2, readLog(t, logf))
	}
	if got := readLog(t, logf); got != first+"START\nPRE_GATE\nEND\n" {
		t.Fatalf("hooks after the resume:\n%s", strings.TrimPrefix(got, first))
	}
	if rep2.Outputs["all"] != "word-b from-child" {
		t.Fatalf("outputs %v: the kept steps' results do not feed the resumed ones", rep2.Outputs)
	}
	// The kept item's captured variable is still in its (first attempt's)
	// result; nothing of it is recorded again.
	evs := readAll(t, rep.TranscriptPath)
	n := 0
	for _, e := range evs {
		if e.Type == transcript.StepCompleted && e.Path == "each.item" {
			var cr transcript.CommandResult
			transcript.DecodeResult(e.Step().Result, &cr)
			if cr.Captured["word"] != "word-"+[]string{"a", "b"}[n%2] {
				t.Fatalf("item %d captured %v", n, cr.Captured)
			}
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d item completions in the file, want 2 (kept, not run again)", n)
	}
	h.verify()
}
