package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/rerun"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/transcript"
)

// killWorkflow has a loop, a parallel block (one branch a loop of its own)
// and a sub-workflow with a loop, each step sleeping a little so that a
// kill lands anywhere. Its outputs gather every step's output, so a resume
// that loses or repeats a result shows.
const killWorkflow = `
name: killable
inputs:
  - {name: tag, default: "t"}
outputs:
  - {name: all, from: 'trim(states.gather.Output)'}
  - {name: child, from: 'states.sub.Data.r'}
states:
  initial: prep
  prep: {type: step, command: 'sleep 0.03; echo prep-{{.inputs.tag}}', on_success: each}
  each:
    type: for_each
    items: '["a","b","c","d"]'
    body: [one, two]
    on_complete: fan
  one: {type: step, command: 'sleep 0.02; echo one-{{.loop.Item}}'}
  two: {type: step, command: 'sleep 0.03; echo two-{{trimSpace .states.one.Output}}'}
  fan: {type: parallel, parallel: [x, spin], on_success: sub}
  x: {type: step, command: 'sleep 0.08; echo x'}
  spin: {type: while, while: 'loop.Index < 3', body: [tick]}
  tick: {type: step, command: 'sleep 0.03; echo tick-{{.loop.Index}}'}
  sub:
    type: call_workflow
    workflow: killchild
    inputs: {v: '{{trimSpace .states.two.Output}}'}
    outputs: {r: r}
    on_success: gather
  gather:
    type: step
    command: 'echo {{trimSpace .states.prep.Output}} {{trimSpace .states.two.Output}} {{trimSpace .states.x.Output}} {{trimSpace .states.tick.Output}} {{.states.sub.Data.r}} {{.states.each.Data.iterations}}'
    on_success: done
  done: {type: terminal, message: '{{trimSpace .states.gather.Output}}'}
`

const killChild = `
name: killchild
inputs: [{name: v, required: true}]
outputs: [{name: r, from: 'trim(states.c2.Output)'}]
states:
  initial: c1
  c1: {type: for_each, items: '[1,2]', body: [c], on_complete: c2}
  c: {type: step, command: 'sleep 0.03; echo c{{.loop.Item}}'}
  c2: {type: step, command: 'sleep 0.03; echo {{.inputs.v}}-{{trimSpace .states.c.Output}}'}
`

var regexpRunID = regexp.MustCompile(`(?m)^run ([0-9a-f-]{36})$`)

// startRun starts the reel binary and returns once it printed the run id.
func startRun(t *testing.T, dir string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(reelBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REEL_STORAGE=")
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(errp)
	var said []string
	for sc.Scan() {
		said = append(said, sc.Text())
		if id, ok := strings.CutPrefix(sc.Text(), "run "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, id
		}
		if id, ok := strings.CutPrefix(sc.Text(), "resume "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return cmd, strings.Fields(id)[0]
		}
	}
	cmd.Wait()
	t.Fatalf("reel %v printed no run id:\n%s", args, strings.Join(said, "\n"))
	return nil, ""
}

func runOutputs(t *testing.T, res cliResult) map[string]any {
	t.Helper()
	var s runJSON
	if err := json.Unmarshal([]byte(res.stdout), &s); err != nil {
		t.Fatalf("--json: %v\n%s\n%s", err, res.stdout, res.stderr)
	}
	if s.Status != "success" {
		t.Fatalf("run %s: %s (%s)\n%s", s.RunID, s.Status, s.Error, res.stderr)
	}
	return s.Outputs
}

// A run killed with SIGKILL at random points until 20 were caught before
// the end, each then resumed (and, every third time, killed again while
// resuming and resumed once more), ends with the outputs of a run never
// interrupted, and every transcript it wrote passes reel verify.
func TestResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 20 runs")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "wf.yaml"), killWorkflow, 0o644)
	writeFile(t, filepath.Join(dir, "killchild.yaml"), killChild, 0o644)
	storage := filepath.Join(dir, "store")

	reelBinary(t) // built before the clock starts
	start := time.Now()
	ref := runBinary(t, dir, "run", "wf.yaml", "--storage", storage, "--json")
	took := time.Since(start)
	want := runOutputs(t, ref)
	if want["all"] != "prep-t two-one-d x tick-2 two-one-d-c2 4" || want["child"] != "two-one-d-c2" {
		t.Fatalf("reference outputs %v", want)
	}

	// Kill points are spread over the run's events, not its time: a
	// machine under load runs slower, not differently.
	var refSum runJSON
	json.Unmarshal([]byte(ref.stdout), &refSum)
	refBytes, err := os.ReadFile(refSum.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Count(string(refBytes), "\n")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	// A kill can land after run.completed (the run's last events come in
	// a burst, and a loaded machine polls late): such a point still
	// checks that resume refuses a finished run, but it does not count
	// towards the 20 interrupted runs the test is about.
	resumed, tries := 0, 0
	for i := 0; resumed < 20; i++ {
		if tries++; tries > 60 {
			t.Fatalf("only %d of %d kills left a run to resume", resumed, tries-1)
		}
		at := 1 + rng.IntN(events-2) // kill once this many events are written
		cmd, id := startRun(t, dir, "run", "wf.yaml", "--storage", storage)
		path := filepath.Join(transcript.Dir(storage), id+".jsonl")
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			b, _ := os.ReadFile(path)
			if strings.Count(string(b), "\n") >= at {
				break
			}
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if sum, err := runs.Open(path, runs.Options{}).Summarize(); i%3 == 2 && err == nil && sum.Status == runstatus.Interrupted {
			// kill the resume too, somewhere
			rc, rid := startRun(t, dir, "resume", id, "--storage", storage)
			if rid != id {
				t.Fatalf("resume printed %s, want %s", rid, id)
			}
			time.Sleep(time.Duration(rng.Int64N(int64(took / 2))))
			rc.Process.Signal(syscall.SIGKILL)
			rc.Wait()
		}
		sum, err := runs.Open(path, runs.Options{}).Summarize()
		if err != nil {
			t.Fatalf("point %d (event %d): %v", i, at, err)
		}
		for deadline := time.Now().Add(2 * time.Second); sum.Status == runstatus.Running && time.Now().Before(deadline); {
			// a step the kill caught between fork and exec holds the
			// file for a moment
			time.Sleep(20 * time.Millisecond)
			sum, _ = runs.Open(path, runs.Options{}).Summarize()
		}
		var got map[string]any
		if sum.Status == runstatus.Success {
			// killed after run.completed: nothing left to resume
			res := runBinary(t, dir, "resume", id, "--storage", storage)
			if res.code != exitUser || !strings.Contains(res.stderr, "nothing to resume") {
				t.Fatalf("resume of a finished run: %+v", res)
			}
			rec, err := rerun.Load(path, rerun.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got = rec.Result.Outputs
		} else {
			if sum.Status != runstatus.Interrupted {
				t.Fatalf("point %d: status %s after SIGKILL, want interrupted", i, sum.Status)
			}
			res := runBinary(t, dir, "resume", id, "--storage", storage, "--json")
			got = runOutputs(t, res)
			resumed++
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("point %d (event %d): outputs %v, want %v", i, at, got, want)
		}
		if res := runBinary(t, dir, "verify", storage); res.code != 0 {
			t.Fatalf("point %d (event %d): reel verify: exit %d\n%s%s", i, at, res.code, res.stdout, res.stderr)
		}
		rec, err := rerun.Load(path, rerun.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != runstatus.Success {
			t.Fatalf("point %d: %s after resume", i, rec.Status)
		}
	}
	t.Logf("reference run %s, %d events; %d of %d kills resumed", took, events, resumed, tries)
}

// A failed run, fixed and resumed, keeps what succeeded; a kept step that
// changed is refused with its name, and --from runs it again.
func TestResumeFailedRunAfterFix(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "wf.yaml")
	body := func(prep, check string) string {
		return fmt.Sprintf(`
name: fixable
states:
  initial: prep
  prep: {type: step, command: 'echo %s >> ran.txt; echo %s', on_success: check}
  check: {type: step, command: '%s', on_success: report}
  report: {type: step, command: 'echo report {{trimSpace .states.prep.Output}}'}
`, prep, prep, check)
	}
	writeFile(t, wf, body("p1", "exit 5"), 0o644)
	storage := filepath.Join(dir, "st")
	res := runBinary(t, dir, "run", "wf.yaml", "--storage", storage)
	if res.code == 0 {
		t.Fatalf("run succeeded: %+v", res)
	}
	id := regexpRunID.FindStringSubmatch(res.stderr)[1]
	writeFile(t, wf, body("p1", "true"), 0o644)
	res = runBinary(t, dir, "resume", id, "--storage", storage)
	if res.code != 0 || !strings.Contains(res.stdout, "↷ prep (success in attempt 1, kept)") || !strings.Contains(res.stdout, "report │ report p1") {
		t.Fatalf("resume: %+v", res)
	}
	if !strings.Contains(res.stderr, "changed since run") {
		t.Errorf("no note that the file changed:\n%s", res.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ran.txt")); string(b) != "p1\n" {
		t.Fatalf("prep ran %q", b)
	}
	// run it again, failing, then change the step it would keep
	writeFile(t, wf, body("p1", "exit 5"), 0o644)
	res = runBinary(t, dir, "run", "wf.yaml", "--storage", storage)
	id = regexpRunID.FindStringSubmatch(res.stderr)[1]
	writeFile(t, wf, body("p2", "true"), 0o644)
	res = runBinary(t, dir, "resume", id, "--storage", storage)
	if res.code != exitUser || !strings.Contains(res.stderr, "state prep changed since attempt 1 ran it") || !strings.Contains(res.stderr, "--from prep") {
		t.Fatalf("changed kept step: %+v", res)
	}
	if !strings.Contains(res.stderr, "cannot resume") || strings.Contains(res.stderr, "transcript ") {
		t.Fatalf("a refused resume printed a transcript path:\n%s", res.stderr)
	}
	res = runBinary(t, dir, "resume", id, "--storage", storage, "--from", "prep")
	if res.code != 0 || !strings.Contains(res.stdout, "report │ report p2") {
		t.Fatalf("--from prep: %+v", res)
	}
	if res := runBinary(t, dir, "resume", id, "--storage", storage); res.code != exitUser || !strings.Contains(res.stderr, "it succeeded") {
		t.Fatalf("resume of a succeeded run: %+v", res)
	}
	if res := runBinary(t, dir, "verify", storage); res.code != 0 {
		t.Fatalf("verify: %+v", res)
	}
	var stats struct{ Runs []struct{ Status string } }
	if st := runBinary(t, dir, "stats", id, "--storage", storage, "--json"); json.Unmarshal([]byte(st.stdout), &stats) != nil || stats.Runs[0].Status != "success" {
		t.Fatalf("stats of a resumed run: %s", st.stdout)
	}
	tree := runBinary(t, dir, "tree", id, "--storage", storage)
	if !strings.Contains(tree.stdout, "2 attempts") || !strings.Contains(tree.stdout, "report  command  (resumed, run attempt 2)  success") {
		t.Fatalf("tree of a resumed run:\n%s", tree.stdout)
	}
}
