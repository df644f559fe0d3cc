package engine

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/project"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// harness runs workflows written into a temp dir with a real engine.
type harness struct {
	t       *testing.T
	dir     string
	storage string
	display bytes.Buffer
	e       *Engine
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, dir: dir, storage: filepath.Join(dir, "storage")}
	h.e = &Engine{Storage: h.storage, Display: &h.display, ProjectDir: dir, KillGrace: 200 * time.Millisecond}
	return h
}

func (h *harness) write(name, body string) string {
	h.t.Helper()
	p := filepath.Join(h.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) load(name, body string) *workflow.Workflow {
	h.t.Helper()
	wf, err := workflow.Load(h.write(name, body), h.e.LoadOptions())
	if err != nil {
		h.t.Fatalf("load %s:\n%v", name, err)
	}
	return wf
}

// copy copies testdata/workflows/name (a workflow, or a file a workflow
// uses) to rel in the harness's directory, keeping its mode, and returns
// its path there. The workflows run from there so that what they call,
// run and read resolves beside the files the test writes, as in a project.
func (h *harness) copy(name, rel string) string {
	h.t.Helper()
	src := filepath.Join("testdata", "workflows", name)
	b, err := os.ReadFile(src)
	if err != nil {
		h.t.Fatal(err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		h.t.Fatal(err)
	}
	p := h.write(rel, string(b))
	if err := os.Chmod(p, fi.Mode().Perm()); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// loadFile loads the workflow testdata/workflows/name (copied into the
// harness's directory under the same name).
func (h *harness) loadFile(name string) *workflow.Workflow {
	h.t.Helper()
	wf, err := workflow.Load(h.copy(name, name), h.e.LoadOptions())
	if err != nil {
		h.t.Fatalf("load testdata/workflows/%s:\n%v", name, err)
	}
	return wf
}

// runFile runs the workflow testdata/workflows/name.
func (h *harness) runFile(ctx context.Context, name string, inputs map[string]string) *Report {
	h.t.Helper()
	return h.runWorkflow(ctx, h.loadFile(name), inputs)
}

// succeedFile runs the workflow testdata/workflows/name and fails the test
// unless the run succeeds.
func (h *harness) succeedFile(name string, inputs map[string]string) *Report {
	h.t.Helper()
	rep := h.runFile(context.Background(), name, inputs)
	if rep.Status != "success" {
		h.t.Fatalf("testdata/workflows/%s: report %+v", name, rep)
	}
	return rep
}

// run runs the workflow body, written to wf.yaml.
func (h *harness) run(ctx context.Context, body string, inputs map[string]string) *Report {
	h.t.Helper()
	return h.runWorkflow(ctx, h.load("wf.yaml", body), inputs)
}

func (h *harness) runWorkflow(ctx context.Context, wf *workflow.Workflow, inputs map[string]string) *Report {
	h.t.Helper()
	rep, err := h.e.Run(ctx, wf, RunOptions{Inputs: inputs})
	if err != nil {
		h.t.Fatalf("run %s: %v", wf.File, err)
	}
	h.verify()
	return rep
}

// succeed runs body and fails the test unless the run succeeds.
func (h *harness) succeed(body string, inputs map[string]string) *Report {
	h.t.Helper()
	rep := h.run(context.Background(), body, inputs)
	if rep.Status != "success" {
		h.t.Fatalf("report %+v", rep)
	}
	return rep
}

// commandOutput is the output of the command step whose completion is the
// i-th event of the transcript at path.
func commandOutput(t *testing.T, path string, i int) string {
	t.Helper()
	var cr transcript.CommandResult
	if err := transcript.DecodeResult(readAll(t, path)[i].Step().Result, &cr); err != nil {
		t.Fatal(err)
	}
	return cr.Output
}

// verify checks every transcript in the storage with the verify package.
func (h *harness) verify() {
	h.t.Helper()
	if h.e.NoTranscript {
		return
	}
	rep := verify.Paths([]string{h.storage}, verify.Options{})
	if rep.Violations() > 0 || len(rep.Unreadable) > 0 {
		h.t.Fatalf("transcripts fail verification: %v %v", rep.Problems, rep.Unreadable)
	}
}

// events reads a transcript as compact lines: "type path@iter kind:name".
func events(t *testing.T, path string) []string {
	t.Helper()
	evs, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var out []string
	for _, e := range evs {
		s := fmt.Sprintf("%s %s@%d", e.Type, e.Path, e.Iteration)
		if p := e.Step(); p != nil {
			s += " " + p.Kind + ":" + p.Name
			if p.Attempt > 0 {
				s += " a" + strconv.Itoa(p.Attempt)
			}
			if p.Error != "" && e.Type != transcript.StepStarted {
				s += " !"
			}
		}
		if e.ChildRunID != "" {
			s += " child"
		}
		out = append(out, s)
	}
	return out
}

// checkEvents compares the events of the transcript at path, as events
// renders them, with the golden file testdata/workflows/name (the sequence
// the workflow beside it must record), and stops the test on a difference:
// what follows reads the events by position.
func checkEvents(t *testing.T, path, name string) {
	t.Helper()
	checkEventLines(t, events(t, path), name)
}

func checkEventLines(t *testing.T, got []string, name string) {
	t.Helper()
	failed := t.Failed()
	golden.Check(t, filepath.Join("testdata", "workflows", name), []byte(strings.Join(got, "\n")+"\n"))
	if !failed && t.Failed() {
		t.FailNow()
	}
}

func assertEvents(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("event sequence mismatch\n--- got\n%s\n--- want\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func readAll(t *testing.T, path string) []transcript.ExchangeEvent {
	t.Helper()
	evs, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestCommandTransitionsTerminal(t *testing.T) {
	h := newHarness(t)
	rep := h.runFile(context.Background(), "transitions.yaml", nil)
	if rep.Status != "success" || rep.ExitCode != 0 {
		t.Fatalf("report %+v", rep)
	}
	checkEvents(t, rep.TranscriptPath, "transitions.events")
	evs := readAll(t, rep.TranscriptPath)
	if c := evs[5].Step().Command; c != `echo "code=4"` {
		t.Errorf("resolved command = %q", c)
	}
	var cr transcript.CommandResult
	if err := transcript.DecodeResult(evs[4].Step().Result, &cr); err != nil || cr.ExitCode != 4 {
		t.Errorf("big result %+v %v", cr, err)
	}
	if !strings.Contains(h.display.String(), "■ finished code=4") {
		t.Errorf("display lacks terminal message:\n%s", h.display.String())
	}
}

func TestInlineOnFailureAndExitStatus(t *testing.T) {
	h := newHarness(t)
	rep := h.runFile(context.Background(), "on-failure-status.yaml", nil)
	if rep.Status != "failure" || rep.ExitCode != 7 || rep.Error != "a broke: boom\n" {
		t.Fatalf("report %+v", rep)
	}
	evs := readAll(t, rep.TranscriptPath)
	last := evs[len(evs)-1]
	var rr transcript.RunResult
	if err := transcript.DecodeResult(last.Step().Result, &rr); err != nil || rr.Status != "failure" || rr.ExitCode != 7 {
		t.Fatalf("run result %+v %v", rr, err)
	}
	if last.Step().Error == "" {
		t.Fatal("run.completed has no error")
	}

	// Without on_failure the run fails with AWF's execution error status;
	// the error names the step's.
	rep = h.runFile(context.Background(), "step-fails.yaml", nil)
	if rep.ExitCode != exitcode.Execution || !strings.Contains(rep.Error, `state "a" failed: exit status 5`) {
		t.Fatalf("report %+v", rep)
	}

	// An inline on_failure without a status fails the run with status 3.
	rep = h.runFile(context.Background(), "on-failure-no-status.yaml", nil)
	if rep.ExitCode != exitcode.Execution || rep.Error != "no status given" {
		t.Fatalf("report %+v", rep)
	}
}

func TestContinueOnErrorAndOutputLimit(t *testing.T) {
	h := newHarness(t)
	h.e.OutputLimit = 10
	rep := h.succeedFile("continue-on-error.yaml", nil)
	evs := readAll(t, rep.TranscriptPath)
	var cr transcript.CommandResult
	transcript.DecodeResult(evs[2].Step().Result, &cr)
	if cr.Output != "abcdefghij" || !cr.Truncated || cr.ExitCode != 1 {
		t.Fatalf("result %+v", cr)
	}
}

// Loops inside parallel branches, with max_concurrent 1 so the sequence is
// exact.
func TestLoopsInParallelBranches(t *testing.T) {
	h := newHarness(t)
	rep := h.succeedFile("loops-in-parallel.yaml", nil)
	checkEvents(t, rep.TranscriptPath, "loops-in-parallel.events")
	var outs []string
	for _, e := range readAll(t, rep.TranscriptPath) {
		if e.Type == transcript.StepCompleted && e.Step().Name == "leaf" {
			var cr transcript.CommandResult
			transcript.DecodeResult(e.Step().Result, &cr)
			outs = append(outs, strings.TrimSpace(cr.Output))
		}
	}
	if got := strings.Join(outs, "|"); got != "a1 true false|a2 false true|b1 true false|b2 false true" {
		t.Fatalf("loop variables: %s", got)
	}
}

// Retries inside a loop: the body step fails on its first attempt in every
// iteration and succeeds on the second.
func TestRetriesInsideLoop(t *testing.T) {
	h := newHarness(t)
	marks := filepath.Join(h.dir, "marks")
	os.Mkdir(marks, 0o755)
	rep := h.succeedFile("retries-in-loop.yaml", map[string]string{"marks": marks})
	checkEvents(t, rep.TranscriptPath, "retries-in-loop.events")
}

func TestRetryStopsOnNonRetryableExit(t *testing.T) {
	h := newHarness(t)
	rep := h.runFile(context.Background(), "retry-non-retryable.yaml", nil)
	got := events(t, rep.TranscriptPath)
	if len(got) != 4 || rep.ExitCode != exitcode.Execution || !strings.Contains(rep.Error, "exit status 2") {
		t.Fatalf("want one attempt, got %v (%+v)", got, rep)
	}
}

func TestBackoff(t *testing.T) {
	rt := &workflow.Retry{InitialDelay: 100 * time.Millisecond, MaxDelay: time.Second, Multiplier: 2}
	for _, c := range []struct {
		backoff string
		n       int
		want    time.Duration
	}{
		{"constant", 3, 100 * time.Millisecond},
		{"linear", 3, 300 * time.Millisecond},
		{"exponential", 1, 100 * time.Millisecond},
		{"exponential", 3, 400 * time.Millisecond},
		{"exponential", 10, time.Second},
	} {
		rt.Backoff = c.backoff
		if got := backoff(rt, c.n); got != c.want {
			t.Errorf("%s attempt %d: %v, want %v", c.backoff, c.n, got, c.want)
		}
	}
	rt.Backoff, rt.Jitter = "constant", 0.5
	for i := 0; i < 200; i++ {
		d := backoff(rt, 1)
		if d < 50*time.Millisecond || d > 150*time.Millisecond {
			t.Fatalf("jittered delay %v outside ±50%%", d)
		}
	}
}

// Three nested sub-workflows, mixing the nested and flat call forms.
func TestNestedSubWorkflowsThreeDeep(t *testing.T) {
	h := newHarness(t)
	h.copy("level2.yaml", "level2.yaml")
	h.copy("level3.yaml", ".reel/workflows/level3.yaml")
	rep := h.succeedFile("level1.yaml", nil)
	checkEvents(t, rep.TranscriptPath, "level1.events")
	evs := readAll(t, rep.TranscriptPath)
	// The called workflow is named in the call events' results.
	for _, i := range []int{2, 3} {
		var cr struct {
			Workflow string `json:"workflow"`
			Status   string `json:"status"`
		}
		if err := transcript.DecodeResult(evs[i].Step().Result, &cr); err != nil || cr.Workflow != "level2" || (i == 3) != (cr.Status == "success") {
			t.Errorf("%s result %+v (%v)", evs[i].Type, cr, err)
		}
	}
	if evs[6].Step() == nil {
		t.Fatal("no show result")
	}
	var cr transcript.CommandResult
	transcript.DecodeResult(evs[6].Step().Result, &cr)
	if cr.Output != "got HELLO\n" {
		t.Fatalf("output mapped through three levels: %q", cr.Output)
	}
	// Follow the child links down: each level has its own file whose
	// events all carry the parent's run id.
	parent, path := rep.RunID, rep.TranscriptPath
	names := []string{"level2", "level3"}
	for depth := 0; depth < 2; depth++ {
		var child string
		for _, e := range readAll(t, path) {
			if e.Type == transcript.CallWorkflowStarted {
				child = e.ChildRunID
			}
		}
		if child == "" {
			t.Fatalf("level %d has no child link", depth+1)
		}
		path = filepath.Join(transcript.Dir(h.storage), child+".jsonl")
		cevs := readAll(t, path)
		for _, e := range cevs {
			if e.ParentRunID != parent || e.RunID != child {
				t.Fatalf("child event %+v: parent %q run %q", e, e.ParentRunID, e.RunID)
			}
		}
		if cevs[0].Step().Name != names[depth] {
			t.Fatalf("child %d is %s", depth, cevs[0].Step().Name)
		}
		parent = child
	}
}

func TestCallWorkflowCycleAndDepth(t *testing.T) {
	h := newHarness(t)
	h.copy("cycle-b.yaml", "cycle-b.yaml")
	rep := h.runFile(context.Background(), "cycle-a.yaml", nil)
	if rep.Status != "failure" || !strings.Contains(rep.Error, "call_workflow cycle: cycle-a.yaml → cycle-b.yaml → cycle-a.yaml") {
		t.Fatalf("report %+v", rep)
	}
	h2 := newHarness(t)
	h2.e.MaxDepth = 1
	h2.copy("depth-c.yaml", "depth-c.yaml")
	h2.copy("depth-d.yaml", "depth-d.yaml")
	rep = h2.runFile(context.Background(), "depth-top.yaml", nil)
	if rep.Status != "failure" || !strings.Contains(rep.Error, "nesting deeper than 1") {
		t.Fatalf("report %+v", rep)
	}
}

// A timeout kills the whole process group, background children included.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	h := newHarness(t)
	pidFile := filepath.Join(h.dir, "bg.pid")
	start := time.Now()
	rep := h.runFile(context.Background(), "timeout-kills-group.yaml", map[string]string{"pid_file": pidFile})
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("timeout took %v", el)
	}
	if rep.ExitCode != exitcode.Execution || !strings.Contains(rep.Error, "timed out after 300ms") {
		t.Fatalf("report %+v", rep)
	}
	checkEvents(t, rep.TranscriptPath, "timeout-kills-group.events")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("background child %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Cancelling the run stops the running process and still writes
// run.completed with the reason.
func TestCancelWritesRunCompleted(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	marker := filepath.Join(h.dir, "started")
	go func() {
		for {
			if _, err := os.Stat(marker); err == nil {
				cancel(fmt.Errorf("received SIGINT"))
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	rep := h.runFile(ctx, "cancel-parallel.yaml", map[string]string{"marker": marker})
	if time.Since(start) > 5*time.Second {
		t.Fatal("cancel did not stop the processes")
	}
	if rep.Status != "cancelled" || rep.ExitCode != 130 || rep.Error != "cancelled: received SIGINT" {
		t.Fatalf("report %+v", rep)
	}
	got := events(t, rep.TranscriptPath)
	if got[len(got)-1] != "run.completed @0 workflow:c !" {
		t.Fatalf("last event %q", got[len(got)-1])
	}
	for _, g := range got {
		if strings.Contains(g, "never") {
			t.Fatal("a state ran after cancel")
		}
	}
	evs := readAll(t, rep.TranscriptPath)
	var rr transcript.RunResult
	transcript.DecodeResult(evs[len(evs)-1].Step().Result, &rr)
	if rr.Status != "cancelled" {
		t.Fatalf("run result %+v", rr)
	}
}

func TestParallelStrategies(t *testing.T) {
	for _, c := range []struct {
		strategy string
		status   string
		check    func(t *testing.T, res map[string]any)
	}{
		{"all_succeed", "failure", nil},
		{"any_succeed", "success", nil},
		{"best_effort", "success", nil},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			h := newHarness(t)
			start := time.Now()
			rep := h.run(context.Background(), fmt.Sprintf(`
name: s
states:
  initial: fan
  fan:
    type: parallel
    strategy: %s
    parallel: [ok, bad, slow]
  ok: {type: step, command: 'sleep 0.1'}
  bad: {type: step, command: 'exit 1'}
  slow: {type: step, command: 'sleep 3'}
`, c.strategy), nil)
			el := time.Since(start)
			if rep.Status != c.status {
				t.Fatalf("status %s, want %s (%s)", rep.Status, c.status, rep.Error)
			}
			// all_succeed stops at the first failure, any_succeed at the
			// first success; best_effort waits for everything.
			if c.strategy == "best_effort" && el < 3*time.Second {
				t.Fatalf("best_effort returned after %v", el)
			}
			if c.strategy != "best_effort" && el > 2500*time.Millisecond {
				t.Fatalf("%s did not cancel the slow branch (%v)", c.strategy, el)
			}
			evs := readAll(t, rep.TranscriptPath)
			var slowStarted bool
			var slowStatus string
			for _, e := range evs {
				if e.Path != "fan.slow" {
					continue
				}
				switch e.Type {
				case transcript.StepStarted:
					slowStarted = true
				case transcript.StepCompleted:
					slowStatus = e.Step().Error
				}
			}
			// The failure can cancel the slow branch before it starts, in
			// which case it never ran and has no events; once started, it
			// must end cancelled.
			if c.strategy != "best_effort" && slowStarted && !strings.HasPrefix(slowStatus, "cancelled") {
				t.Fatalf("slow branch error %q, want cancelled", slowStatus)
			}
			if c.strategy == "best_effort" && !slowStarted {
				t.Fatal("best_effort did not run the slow branch")
			}
		})
	}
}

func TestRegisteredCustomStepAndPlugin(t *testing.T) {
	h := newHarness(t)
	err := h.e.Register("greet", func(ctx context.Context, req StepRequest) (StepResult, error) {
		return StepResult{Output: fmt.Sprintf("hi %v", req.Config["who"]), Data: map[string]any{"path": req.Path}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.e.Register("step", nil); err == nil {
		t.Fatal("nil registration accepted")
	}
	plugin := h.write("plugins/upper", "#!/bin/sh\nread -r line\nprintf '{\"output\":\"plugin saw %s\",\"data\":{\"n\":7}}' \"$(echo \"$line\" | wc -c | tr -d ' ')\"\n")
	os.Chmod(plugin, 0o755)
	h.write(".reel/config.yaml", "plugins:\n  upper:\n    command: ./plugins/upper\n    timeout: 5s\n")
	cfg, err := project.LoadConfig(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	h.e.Plugins = cfg.Plugins
	rep := h.succeedFile("custom-steps.yaml", nil)
	checkEvents(t, rep.TranscriptPath, "custom-steps.events")
	if out := commandOutput(t, rep.TranscriptPath, 6); out != "hi bob 7\n" {
		t.Fatalf("output %q", out)
	}

	// An unknown type is refused at load time with a suggestion.
	_, err = workflow.Parse([]byte("name: x\nstates:\n  initial: a\n  a: {type: gret}\n"), "x.yaml", h.e.LoadOptions())
	if err == nil || !strings.Contains(err.Error(), `x.yaml:4:13: unknown state type "gret"`) || !strings.Contains(err.Error(), `did you mean "greet"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestPluginFailure(t *testing.T) {
	h := newHarness(t)
	p := h.write("bad", "#!/bin/sh\ncat >/dev/null\necho '{\"error\":\"quota exceeded\"}'\nexit 3\n")
	os.Chmod(p, 0o755)
	h.e.Plugins = map[string]Plugin{"bad": {Command: p}}
	rep := h.runFile(context.Background(), "plugin-fails.yaml", nil)
	if rep.Status != "failure" || !strings.Contains(rep.Error, "quota exceeded") {
		t.Fatalf("report %+v", rep)
	}
}

func TestHTTPOperation(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		if hits == 1 {
			w.WriteHeader(503)
			return
		}
		if r.Method != "POST" || r.Header.Get("X-Token") != "t1" {
			w.WriteHeader(400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"greeting":"hello","len":%d}`, r.ContentLength)
	}))
	defer srv.Close()
	h := newHarness(t)
	rep := h.succeedFile("http-operation.yaml", map[string]string{"server_url": srv.URL})
	checkEvents(t, rep.TranscriptPath, "http-operation.events")
	if out := commandOutput(t, rep.TranscriptPath, 6); out != "hello 200\n" {
		t.Fatalf("output %q", out)
	}
}

func TestInputsChecked(t *testing.T) {
	h := newHarness(t)
	wf := h.loadFile("inputs-checked.yaml")
	_, err := h.e.Run(context.Background(), wf, RunOptions{Inputs: map[string]string{"n": "9", "mode": "warp", "extra": "1"}})
	if err == nil {
		t.Fatal("bad inputs accepted")
	}
	for _, want := range []string{`input "n"`, "above the maximum 5", `"warp" is not one of fast, slow`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// a value for an input the workflow does not declare is ignored, as in
	// AWF
	if strings.Contains(err.Error(), "extra") {
		t.Errorf("error %q names the undeclared input", err)
	}
	rep, err := h.e.Run(context.Background(), wf, RunOptions{Inputs: map[string]string{"n": "3", "extra": "1"}})
	if err != nil || rep.Status != "success" {
		t.Fatalf("an undeclared input refused the run: %v %+v", err, rep)
	}
}

func TestWhileMaxIterationsAndBreakWhen(t *testing.T) {
	h := newHarness(t)
	rep := h.succeedFile("while-max-iterations.yaml", nil)
	var spin, each map[string]any
	for _, e := range readAll(t, rep.TranscriptPath) {
		if e.Type == transcript.StepCompleted && e.Path == "spin" {
			transcript.DecodeResult(e.Step().Result, &spin)
		}
		if e.Type == transcript.StepCompleted && e.Path == "each" {
			transcript.DecodeResult(e.Step().Result, &each)
		}
	}
	if spin["iterations"] != float64(3) || spin["max_iterations_reached"] != true {
		t.Fatalf("while result %v", spin)
	}
	if each["iterations"] != float64(2) || each["broke"] != true || each["items"] != float64(3) {
		t.Fatalf("for_each result %v", each)
	}
}

// An agent step runs the provider executable named by options.command (a
// script replaying a recorded claude stream) and records the exchange under
// the step's path and iteration.
func TestAgentStepReplaysRecording(t *testing.T) {
	fake, err := filepath.Abs("testdata/fake-claude")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	rep := h.succeedFile("agent-in-loop.yaml", map[string]string{"claude": fake})
	got := events(t, rep.TranscriptPath)
	// The order of the provider's own events inside the step is package
	// agent's business; the engine's part is that they all sit between the
	// step's started and completed, under its path and iteration.
	if len(got) == 13 {
		sort.Strings(got[4:8])
	}
	checkEventLines(t, got, "agent-in-loop.events")
	evs := readAll(t, rep.TranscriptPath)
	mu := evs[3].Message()
	if mu == nil || len(mu.Blocks) != 2 || mu.Blocks[0].Text != "Review main.go" || mu.Blocks[1].Text != "Be brief." {
		t.Fatalf("message.user %+v", evs[3].Payload)
	}
	var ar transcript.AgentResult
	if err := transcript.DecodeResult(evs[8].Step().Result, &ar); err != nil || ar.Output != "LGTM: main.go is an empty program." || ar.Usage.TotalTokens == 0 {
		t.Fatalf("agent result %+v %v", ar, err)
	}
	if rep.Usage.TotalTokens != ar.Usage.TotalTokens || rep.CostUSD == nil {
		t.Fatalf("run usage %+v cost %v, agent %+v", rep.Usage, rep.CostUSD, ar.Usage)
	}
	var cr transcript.CommandResult
	transcript.DecodeResult(evs[11].Step().Result, &cr)
	if cr.Output != fmt.Sprintf("LGTM: main.go is an empty program. %d\n", ar.Usage.TotalTokens) {
		t.Fatalf("after output %q", cr.Output)
	}
}

// openAIServer streams recorded-shape chat.completion.chunk responses: the
// first asks for the Read tool, the second answers with text.
func openAIServer(t *testing.T) *httptest.Server {
	chunk := func(delta, finish string, usage string) string {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1763780000,"model":"local-model","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}],"usage":` + usage + "}\n\n"
	}
	turns := []string{
		chunk(`{"role":"assistant","content":""}`, "", "null") +
			chunk(`{"tool_calls":[{"index":0,"id":"call_read1","type":"function","function":{"name":"Read","arguments":""}}]}`, "", "null") +
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_path\":\"note.txt\"}"}}]}`, "", "null") +
			chunk(`{}`, "tool_calls", `{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49}`) + "data: [DONE]\n\n",
		chunk(`{"role":"assistant","content":"The note says: "}`, "", "null") +
			chunk(`{"content":"hello from disk"}`, "", "null") +
			chunk(`{}`, "stop", `{"prompt_tokens":70,"completion_tokens":6,"total_tokens":76}`) + "data: [DONE]\n\n",
	}
	n := 0
	var mu = make(chan struct{}, 1)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu <- struct{}{}
		defer func() { <-mu }()
		if n >= len(turns) {
			http.Error(w, "no more turns", 500)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, turns[n])
		n++
	}))
}

// The openai_compatible provider runs over HTTP with reel's router serving
// the Read tool inside the working directory.
func TestOpenAICompatibleAgentWithRouter(t *testing.T) {
	srv := openAIServer(t)
	defer srv.Close()
	h := newHarness(t)
	h.e.Dir = h.dir
	h.write("note.txt", "hello from disk\n")
	h.e.Environ = append(os.Environ(), "TEST_OPENAI_KEY=sk-test")
	rep := h.succeedFile("openai-reads-note.yaml", map[string]string{"base_url": srv.URL + "/v1"})
	var calls, results int
	var ar transcript.AgentResult
	for _, e := range readAll(t, rep.TranscriptPath) {
		switch e.Type {
		case transcript.ToolCall:
			calls++
			if e.Tool().Fidelity != transcript.FidelityRouter || e.Path != "ask" {
				t.Fatalf("tool.call %+v", e)
			}
		case transcript.ToolResult:
			results++
		case transcript.StepCompleted:
			transcript.DecodeResult(e.Step().Result, &ar)
		}
	}
	if calls != 1 || results != 1 || !strings.Contains(ar.Output, "hello from disk") || rep.Usage.TotalTokens != 125 {
		t.Fatalf("calls %d results %d result %+v usage %+v", calls, results, ar, rep.Usage)
	}
}

func TestScriptFileDirAndCallTimeout(t *testing.T) {
	h := newHarness(t)
	h.e.Dir = h.dir
	h.copy("scripts/hello.sh", "scripts/hello.sh")
	os.Mkdir(filepath.Join(h.dir, "work"), 0o755)
	h.copy("slowchild.yaml", "slowchild.yaml")
	start := time.Now()
	rep := h.runFile(context.Background(), "script-file.yaml", nil)
	if time.Since(start) > 5*time.Second || rep.Status != "success" {
		t.Fatalf("report %+v after %v", rep, time.Since(start))
	}
	evs := readAll(t, rep.TranscriptPath)
	last := evs[len(evs)-2]
	var cr transcript.CommandResult
	transcript.DecodeResult(last.Step().Result, &cr)
	if cr.Output != "script in work for you\n / failed\n" {
		t.Fatalf("output %q", cr.Output)
	}
	var childErr string
	for _, e := range evs {
		if e.Type == transcript.CallWorkflowCompleted {
			childErr = e.Step().Error
		}
	}
	if childErr != "cancelled: call_workflow timed out after 300ms" {
		t.Fatalf("child error %q", childErr)
	}
}

// Branches run concurrently: the events of different branches interleave,
// but each branch's own sequence is exact and the transcript verifies.
func TestConcurrentBranchesKeepTheirOrder(t *testing.T) {
	h := newHarness(t)
	rep := h.succeedFile("concurrent-branches.yaml", nil)
	got := events(t, rep.TranscriptPath)
	for _, b := range []string{"l1", "l2"} {
		var sub []string
		for _, g := range got {
			if strings.Contains(g, " fan."+b) {
				sub = append(sub, g)
			}
		}
		want := []string{"step.started fan." + b + "@0 for_each:" + b}
		s := "s" + b[1:]
		for i := 0; i < 3; i++ {
			want = append(want,
				fmt.Sprintf("step.started fan.%s.%s@%d command:%s", b, s, i, s),
				fmt.Sprintf("step.completed fan.%s.%s@%d command:%s", b, s, i, s))
		}
		want = append(want, "step.completed fan."+b+"@0 for_each:"+b)
		assertEvents(t, sub, want...)
	}
	if got[1] != "step.started fan@0 parallel:fan" || got[len(got)-2] != "step.completed fan@0 parallel:fan" {
		t.Fatalf("parallel does not enclose its branches:\n%s", strings.Join(got, "\n"))
	}
}
