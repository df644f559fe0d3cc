package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/transcript"
)

// outputs returns the command output of every step.completed, as
// "path@iteration=output".
func outputs(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, e := range readAll(t, path) {
		if e.Type != transcript.StepCompleted || e.Step().Kind != transcript.KindCommand {
			continue
		}
		var cr transcript.CommandResult
		if err := transcript.DecodeResult(e.Step().Result, &cr); err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Path+"@"+string(rune('0'+e.Iteration))+"="+strings.TrimSpace(cr.Output))
	}
	return out
}

func stepResult(t *testing.T, path, stepPath string) map[string]any {
	t.Helper()
	var res map[string]any
	for _, e := range readAll(t, path) {
		if e.Type == transcript.StepCompleted && e.Path == stepPath {
			transcript.DecodeResult(e.Step().Result, &res)
		}
	}
	return res
}

// Inside a loop body a state's next state decides, as in AWF: a body
// state jumps there, the loop itself goes on in order, a state outside
// ends the loop and the run goes there; a failure leading back to the
// loop goes on with the next body state.
func TestLoopBodyFollowsTransitions(t *testing.T) {
	h := newHarness(t)
	rep := h.runFile(context.Background(), "loop-body-transitions.yaml", nil)
	if rep.Status != "success" || rep.ExitCode != 0 {
		t.Fatalf("report %+v", rep)
	}
	got := strings.Join(outputs(t, rep.TranscriptPath), " ")
	want := "each.a@0=go each.b@0=b0 each.c@0=c0 each.a@1=skip each.c@1=c1 each.a@2=fail each.b@2=b2 each.c@2=c2 each.a@3=exit out@0=after completed 4 iterations"
	if got != want {
		t.Fatalf("outputs\n got %s\nwant %s", got, want)
	}
	if res := stepResult(t, rep.TranscriptPath, "each"); res["exit"] != "out" || res["iterations"] != float64(4) {
		t.Errorf("loop result %v", res)
	}
}

// A failing body state fails the loop (its on_failure, even to a state
// outside, does not leave the loop as a success would); continue_on_error
// goes on.
func TestLoopBodyFailure(t *testing.T) {
	h := newHarness(t)
	rep := h.succeedFile("loop-body-failure.yaml", nil)
	got := strings.Join(outputs(t, rep.TranscriptPath), " ")
	if got != "each.tolerant@0= each.strict@0=1 each.tolerant@1= each.strict@1=2 handler@0=handled: failed 1" {
		t.Fatalf("outputs %s", got)
	}
}

// A while condition that reads a state that has not run is false (AWF):
// the loop runs no iteration; a failing condition otherwise fails it.
func TestWhileOverStatesNotYetRun(t *testing.T) {
	h := newHarness(t)
	rep := h.runFile(context.Background(), "while-not-yet-run.yaml", nil)
	if rep.Status != "success" || len(outputs(t, rep.TranscriptPath)) != 0 {
		t.Fatalf("report %+v outputs %v", rep, outputs(t, rep.TranscriptPath))
	}
	if res := stepResult(t, rep.TranscriptPath, "spin"); res["iterations"] != float64(0) {
		t.Errorf("spin %v", res)
	}
}

// max_iterations from a template, with arithmetic, from the environment;
// a for_each with more items runs the first max_iterations of them.
func TestDynamicMaxIterations(t *testing.T) {
	h := newHarness(t)
	h.e.Environ = append(os.Environ(), "LIMIT=2")
	rep := h.succeedFile("dynamic-max-iterations.yaml", map[string]string{"n": "3"})
	got := strings.Join(outputs(t, rep.TranscriptPath), " ")
	if got != "each.one@0=a each.one@1=b each.one@2=c each.one@3=d each.one@4=e each.one@5=f each.one@6=g spin.two@0=w0 spin.two@1=w1" {
		t.Fatalf("outputs %s", got)
	}
	if res := stepResult(t, rep.TranscriptPath, "each"); res["skipped_items"] != float64(1) {
		t.Errorf("each %v", res)
	}
	for expr, want := range map[string]string{
		`"{{.inputs.n}} - 3"`: `max_iterations "{{.inputs.n}} - 3" is 0; it must be between 1 and 10000`,
		`"{{.inputs.n}}x"`:    `max_iterations "3x": not an integer or arithmetic on integers`,
		`"{{env.NOPE}}"`:      `.env.NOPE: environment variable NOPE is not set`,
	} {
		rep := h.run(context.Background(), `
name: bad
inputs: [{name: n, type: integer, default: 3}]
states:
  initial: each
  each: {type: for_each, items: '[1]', max_iterations: `+expr+`, body: [one]}
  one: {type: step, command: 'true'}
`, nil)
		if rep.ExitCode != exitcode.Execution || !strings.Contains(rep.Error, want) {
			t.Errorf("%s: %+v, want error %q", expr, rep, want)
		}
	}
}

// A break_when that cannot be evaluated is reported and ignored, as AWF
// does; a true one ends the loop successfully, even after an iteration
// that failed.
func TestBreakWhen(t *testing.T) {
	h := newHarness(t)
	rep := h.succeedFile("break-when.yaml", nil)
	each := stepResult(t, rep.TranscriptPath, "each")
	if each["iterations"] != float64(3) || len(each["break_when_errors"].([]any)) != 3 {
		t.Errorf("each %v", each)
	}
	if spin := stepResult(t, rep.TranscriptPath, "spin"); spin["iterations"] != float64(1) {
		t.Errorf("a true break_when ends the loop successfully after a failed iteration: %v", spin)
	}
	if !strings.Contains(h.display.String(), "break_when ignored") {
		t.Errorf("display:\n%s", h.display.String())
	}
}

// A transition from an inner loop's body to a state outside both loops
// ends both.
func TestNestedLoopExit(t *testing.T) {
	h := newHarness(t)
	rep := h.succeedFile("nested-loop-exit.yaml", nil)
	if got := strings.Join(outputs(t, rep.TranscriptPath), " "); got != "outer.inner.leaf@0=x1 outer.inner.leaf@1=x2 outer.inner.leaf@0=y1 escaped@0=out" {
		t.Fatalf("outputs %s", got)
	}
}

// What templates see at run time: AWF's namespaces, dotted or not; a
// step's output exactly as printed; AWF's statuses; JSON as JSON.
func TestNamespacesAtRunTime(t *testing.T) {
	h := newHarness(t)
	h.e.Environ = append(os.Environ(), "GREETING=hi", "USER=ann", "XDG_CONFIG_HOME=/cfg")
	rep := h.succeedFile("namespaces.yaml", nil)
	got := outputs(t, rep.TranscriptPath)[1]
	want := "show@0=[{\"k\": [1, 2]}\n] failed 3 [1,2]\nns show 36 hi ann /cfg/awf/prompts\n[\"a.go\",\"b.go\"] a.go,b.go [] 0.25"
	if got != want {
		t.Fatalf("output\n got %q\nwant %q", got, want)
	}
}

// A template that cannot render fails its step with a message naming the
// reference; the run fails with AWF's execution error.
func TestUnresolvedReferenceFailsTheStep(t *testing.T) {
	h := newHarness(t)
	rep := h.runFile(context.Background(), "unresolved-reference.yaml", nil)
	if rep.ExitCode != exitcode.Execution || !strings.Contains(rep.Error, ".env.REEL_SURELY_UNSET: environment variable REEL_SURELY_UNSET is not set") {
		t.Fatalf("report %+v", rep)
	}
}

// A workflow's env lists variables the run needs: a missing one stops the
// run before it starts; config inputs fill what --input does not.
func TestRequiredEnvAndConfigInputs(t *testing.T) {
	h := newHarness(t)
	wf := h.loadFile("required-env.yaml")
	h.e.Environ = append(os.Environ(), "REEL_TEST_REGION=")
	_, err := h.e.Run(context.Background(), wf, RunOptions{Inputs: map[string]string{"model": "m"}})
	var ee *EnvError
	if !errors.As(err, &ee) || len(ee.Missing) != 1 || ee.Missing[0] != "REEL_TEST_TOKEN" {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(h.storage); err == nil {
		t.Error("a refused run wrote to the storage")
	}
	h.e.Environ = append(h.e.Environ, "REEL_TEST_TOKEN=t")
	rep, err := h.e.Run(context.Background(), wf, RunOptions{Inputs: map[string]string{"size": "5"}, Defaults: map[string]any{"model": "from-config", "size": 2, "other": true}})
	if err != nil || rep.Status != "success" {
		t.Fatalf("%v %+v", err, rep)
	}
	if got := outputs(t, rep.TranscriptPath); got[0] != "a@0=from-config 5" {
		t.Fatalf("outputs %v", got)
	}
	_, err = h.e.Run(context.Background(), wf, RunOptions{Inputs: map[string]string{"model": ""}})
	if err == nil || !strings.Contains(err.Error(), `input "model" is required but empty`) {
		t.Fatalf("empty required input: %v", err)
	}
}

// A call_workflow cycle ends the run at the call, past its on_failure,
// in the caller's run too (AWF's treatment of a cycle).
func TestCallCycleEndsTheRun(t *testing.T) {
	h := newHarness(t)
	h.copy("cycle-recover-b.yaml", "cycle-recover-b.yaml")
	rep := h.runFile(context.Background(), "cycle-recover-a.yaml", nil)
	if rep.ExitCode != exitcode.Execution || !strings.Contains(rep.Error, "call_workflow cycle: cycle-recover-a.yaml → cycle-recover-b.yaml → cycle-recover-a.yaml") {
		t.Fatalf("report %+v", rep)
	}
	for _, e := range readAll(t, rep.TranscriptPath) {
		if e.Type == transcript.StepStarted && e.Path == "recover" {
			t.Fatal("on_failure ran after a cycle")
		}
	}
}

// Templates, expressions and loops read a step's whole output, as in AWF;
// the transcript keeps OutputLimit of it and says it cut. A step printing
// more than StepOutputMax is stopped and fails, saying so.
func TestStepOutputIsWholeForTemplates(t *testing.T) {
	h := newHarness(t)
	rep := h.succeedFile("whole-output.yaml", nil)
	evs := readAll(t, rep.TranscriptPath)
	var cr transcript.CommandResult
	sizes := find(t, evs, transcript.StepCompleted, "sizes")
	transcript.DecodeResult(sizes.Step().Result, &cr)
	if cr.Output != "70000 70001 99305 completed 100 iterations\n" {
		t.Errorf("sizes: %q", cr.Output)
	}
	a := find(t, evs, transcript.StepCompleted, "a")
	transcript.DecodeResult(a.Step().Result, &cr)
	if len(cr.Output) != DefaultOutputLimit || len(cr.Stderr) != DefaultOutputLimit || !cr.Truncated {
		t.Errorf("recorded: %d bytes of output, %d of stderr, truncated %v", len(cr.Output), len(cr.Stderr), cr.Truncated)
	}

	h.e.StepOutputMax = 1 << 20
	h.e.StepOutput = HideOutput // the display of a million lines is not what is measured
	start := time.Now()
	rep = h.runFile(context.Background(), "endless-output.yaml", nil)
	if rep.Status != "failure" || !strings.Contains(rep.Error, "stdout passed 1 MiB, the most a step's output may hold: the step was stopped") || time.Since(start) > 30*time.Second {
		t.Fatalf("report %+v after %s", rep, time.Since(start))
	}
}

// A state's timeout bounds all its attempts, as AWF's does: an attempt
// that timed out is not retried, and no attempt starts once the delay
// before it would pass the timeout.
func TestTimeoutBoundsEveryAttempt(t *testing.T) {
	h := newHarness(t)
	tries := filepath.Join(h.dir, "tries")
	rep := h.runFile(context.Background(), "timeout-bounds-attempts.yaml", map[string]string{"tries": tries})
	if rep.Status != "failure" {
		t.Fatalf("report %+v", rep)
	}
	b, _ := os.ReadFile(tries)
	if string(b) != "slow\nflaky\nflaky\n" {
		t.Fatalf("attempts:\n%s", b)
	}
	evs := readAll(t, rep.TranscriptPath)
	slowEv := find(t, evs, transcript.StepCompleted, "slow")
	slow := slowEv.Step()
	if slow.Attempt != 1 || !strings.Contains(slow.Error, "timed out after 300ms (not retried: the state's 300ms timeout ends before attempt 2 could start)") {
		t.Errorf("slow: attempt %d, %q", slow.Attempt, slow.Error)
	}
	var last *transcript.StepPayload
	for i := range evs {
		if p := evs[i].Step(); p != nil && evs[i].Type == transcript.StepCompleted && p.Name == "flaky" {
			last = p
		}
	}
	if last == nil || last.Attempt != 2 || !strings.Contains(last.Error, "exit status 1 (not retried: the state's 1.5s timeout ends before attempt 3 could start)") {
		t.Errorf("flaky: %+v", last)
	}
}

// An answer with a status of 400 or more is an answer, as in AWF: the
// state succeeds with .Response.status_code; only a status listed in
// retryable_status_codes fails it (after its retries). Templates read up
// to 1 MiB of the body, AWF's limit; the transcript keeps OutputLimit of
// it and says it cut.
func TestHTTPStatusesAreAnswers(t *testing.T) {
	big := strings.Repeat("b", 100<<10)
	var unavailable int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(404)
			fmt.Fprint(w, `{"error":"no such item"}`)
		case "/busy":
			unavailable++
			w.WriteHeader(503)
		case "/big":
			fmt.Fprint(w, big)
		case "/huge":
			fmt.Fprint(w, strings.Repeat("h", maxHTTPBody+10))
		}
	}))
	defer srv.Close()
	h := newHarness(t)
	rep := h.runFile(context.Background(), "http-statuses.yaml", map[string]string{"server_url": srv.URL})
	if rep.Status != "failure" || !strings.Contains(rep.Error, "retryable status code 503") || unavailable != 2 {
		t.Fatalf("report %+v, %d requests to /busy", rep, unavailable)
	}
	evs := readAll(t, rep.TranscriptPath)
	showEv := find(t, evs, transcript.StepCompleted, "show")
	var cr transcript.CommandResult
	transcript.DecodeResult(showEv.Step().Result, &cr)
	if want := fmt.Sprintf("404 no such item %d %d true\n", len(big), maxHTTPBody); cr.Output != want {
		t.Errorf("show: %q, want %q", cr.Output, want)
	}
	bigEv := find(t, evs, transcript.StepCompleted, "big")
	var res httpResult
	transcript.DecodeResult(bigEv.Step().Result, &res)
	if len(res.Body) != DefaultOutputLimit || !res.Truncated || res.BodyTruncated {
		t.Errorf("big recorded: %d bytes, truncated %v, body_truncated %v", len(res.Body), res.Truncated, res.BodyTruncated)
	}
}

// A call_workflow input the child does not declare is ignored, as AWF
// ignores it: the child runs, the display and the call's result say so.
func TestCallIgnoresUndeclaredInputs(t *testing.T) {
	h := newHarness(t)
	h.copy("undeclared-child.yaml", "undeclared-child.yaml")
	rep := h.runFile(context.Background(), "call-undeclared-inputs.yaml", nil)
	if rep.Status != "success" {
		t.Fatalf("report %+v\n%s", rep, h.display.String())
	}
	if !strings.Contains(h.display.String(), "! call: workflow child declares no input colour, size: ignored") {
		t.Errorf("display:\n%s", h.display.String())
	}
	var res struct {
		Ignored []string `json:"ignored_inputs"`
	}
	evs := readAll(t, rep.TranscriptPath)
	if err := transcript.DecodeResult(evs[len(evs)-2].Step().Result, &res); err != nil || fmt.Sprint(res.Ignored) != "[colour size]" {
		t.Errorf("call result: %+v (%v)", res, err)
	}
}
