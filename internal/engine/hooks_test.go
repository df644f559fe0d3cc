package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/exitcode"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// hookResult decodes the result of a hook step.
func hookResult(t *testing.T, ev transcript.ExchangeEvent) HookResult {
	t.Helper()
	var hr HookResult
	if err := transcript.DecodeResult(ev.Step().Result, &hr); err != nil {
		t.Fatalf("hook result of %s: %v", ev.Path, err)
	}
	return hr
}

// find returns the first event of type typ at path.
func find(t *testing.T, evs []transcript.ExchangeEvent, typ transcript.EventType, path string) transcript.ExchangeEvent {
	t.Helper()
	for _, e := range evs {
		if e.Type == typ && e.Path == path {
			return e
		}
	}
	t.Fatalf("no %s at %q", typ, path)
	return transcript.ExchangeEvent{}
}

// hookHarness is a harness whose steps see HOOK_LOG_FILE, the file it
// returns, as AWF's hook fixtures expect.
func hookHarness(t *testing.T) (*harness, string) {
	h := newHarness(t)
	logf := filepath.Join(h.dir, "hook.log")
	h.e.Environ = append(os.Environ(), "HOOK_LOG_FILE="+logf)
	return h, logf
}

func readLog(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// docs/decisions.md §11: each hook list is one command step nested under what it
// hooks, and the hooks run in AWF's order (hooks-lifecycle.yaml).
func TestHooksRunInOrderAndNest(t *testing.T) {
	h, logf := hookHarness(t)
	rep := h.runFile(context.Background(), "hooks-lifecycle.yaml", nil)
	if rep.Status != "success" || rep.ExitCode != 0 {
		t.Fatalf("report %+v", rep)
	}
	want := "WORKFLOW_START\nSTEP1_PRE\nSTEP1_COMMAND\nSTEP1_POST STEP1_COMMAND 0\nSTEP2_PRE\nSTEP2_COMMAND\nSTEP2_POST\nWORKFLOW_END\n"
	if got := readLog(t, logf); got != want {
		t.Fatalf("hook order:\n%s\nwant\n%s", got, want)
	}
	checkEvents(t, rep.TranscriptPath, "hooks-lifecycle.events")
	evs := readAll(t, rep.TranscriptPath)
	preEv := find(t, evs, transcript.StepStarted, "step1.pre_hook")
	pre := preEv.Step()
	if pre.Command != "echo STEP1_PRE >> "+logf+"\necho second pre" {
		t.Fatalf("pre_hook command %q", pre.Command)
	}
	hr := hookResult(t, find(t, evs, transcript.StepCompleted, "step1.pre_hook"))
	if fmt.Sprint(hr.ExitCodes) != "[0 0]" || hr.Output != "second pre\n" || hr.ExitCode != 0 {
		t.Fatalf("pre_hook result %+v", hr)
	}
	end := hookResult(t, find(t, evs, transcript.StepCompleted, "workflow_end"))
	if fmt.Sprint(end.ExitCodes) != "[0]" || len(end.Logs) != 1 || end.Logs[0] != "finished STEP1_COMMAND" {
		t.Fatalf("workflow_end result %+v", end)
	}
	if !strings.Contains(h.display.String(), "workflow_end │ finished STEP1_COMMAND") {
		t.Fatalf("log line not displayed:\n%s", h.display.String())
	}
}

// A failing workflow_start command ends the run before its first state
// (hooks-failure.yaml): exit status 3, the rest of the list does not run,
// and neither does workflow_error (as in AWF).
func TestWorkflowStartHookFailureEndsRun(t *testing.T) {
	h, logf := hookHarness(t)
	rep := h.runFile(context.Background(), "hooks-start-fails.yaml", nil)
	if rep.Status != "failure" || rep.ExitCode != exitcode.Execution || !strings.Contains(rep.Error, "workflow_start hook failed: command 2 of 3: exit status 1: it broke") {
		t.Fatalf("report %+v", rep)
	}
	if got := readLog(t, logf); got != "WORKFLOW_START\nFAILING_HOOK\n" {
		t.Fatalf("log %q", got)
	}
	checkEvents(t, rep.TranscriptPath, "hooks-start-fails.events")
	hr := hookResult(t, find(t, readAll(t, rep.TranscriptPath), transcript.StepCompleted, "workflow_start"))
	if fmt.Sprint(hr.ExitCodes) != "[0 1]" || hr.ExitCode != 1 || hr.Stderr != "it broke\n" {
		t.Fatalf("hook result %+v", hr)
	}
}

// A failing step hook is recorded and the step goes on (AWF logs a
// warning); a post hook runs after a failed step too, sees its result, and
// the step's on_failure is followed. workflow_error sees .error.
func TestStepHookFailuresAndErrorHook(t *testing.T) {
	h, logf := hookHarness(t)
	rep := h.runFile(context.Background(), "hooks-step-fails.yaml", nil)
	if rep.Status != "failure" || rep.ExitCode != exitcode.Execution {
		t.Fatalf("report %+v", rep)
	}
	want := "PRE2\nPOSTB 7 failed B\nERR b failed with 7 | bad | 3 | execution\n"
	if got := readLog(t, logf); got != want {
		t.Fatalf("log:\n%s\nwant\n%s", got, want)
	}
	evs := readAll(t, rep.TranscriptPath)
	pre := find(t, evs, transcript.StepCompleted, "a.pre_hook")
	if hr := hookResult(t, pre); fmt.Sprint(hr.ExitCodes) != "[5 0]" || pre.Step().Error != "command 1 of 2: exit status 5" {
		t.Fatalf("pre_hook %+v %q", hr, pre.Step().Error)
	}
	if a := find(t, evs, transcript.StepCompleted, "a"); a.Step().Error != "" {
		t.Fatalf("a failed because of its hook: %q", a.Step().Error)
	}
	if !strings.Contains(h.display.String(), "✘ a.pre_hook") {
		t.Fatalf("display:\n%s", h.display.String())
	}
}

// Cancelling the run: the running step's post hook does not run,
// workflow_cancel does (with a context of its own), and the transcript is
// complete.
func TestWorkflowCancelHook(t *testing.T) {
	h, logf := hookHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for readLog(t, logf) == "" {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	rep := h.runFile(ctx, "hooks-cancel.yaml", nil)
	if rep.Status != "cancelled" {
		t.Fatalf("report %+v", rep)
	}
	if got := readLog(t, logf); got != "started\nCANCEL cancelled\n" {
		t.Fatalf("log %q", got)
	}
	checkEvents(t, rep.TranscriptPath, "hooks-cancel.events")
}

// With retries the pre hook runs once, inside the first attempt, and the
// post hook once, inside the last.
func TestHooksAroundRetries(t *testing.T) {
	h := newHarness(t)
	marks := filepath.Join(h.dir, "marks")
	rep := h.succeedFile("hooks-retries.yaml", map[string]string{"marks": marks})
	checkEvents(t, rep.TranscriptPath, "hooks-retries.events")
	post := hookResult(t, find(t, readAll(t, rep.TranscriptPath), transcript.StepCompleted, "flaky.post_hook"))
	if post.Output != "post 0\n" {
		t.Fatalf("post hook saw %q", post.Output)
	}
}

// Hooks of loops, loop bodies, parallel blocks and their branches, and a
// hook timeout: each sits at its step's path and iteration.
func TestHooksInLoopsAndBranches(t *testing.T) {
	h := newHarness(t)
	rep := h.succeedFile("hooks-in-loops.yaml", nil)
	checkEvents(t, rep.TranscriptPath, "hooks-in-loops.events")
	evs := readAll(t, rep.TranscriptPath)
	var second HookResult
	for _, e := range evs {
		if e.Type == transcript.StepCompleted && e.Path == "each.item.pre_hook" && e.Iteration == 1 {
			second = hookResult(t, e)
		}
	}
	if second.Output != "pre b 1\n" {
		t.Fatalf("body hook saw %q", second.Output)
	}
	timeout := find(t, evs, transcript.StepCompleted, "fan.slow.pre_hook")
	if hr := hookResult(t, timeout); fmt.Sprint(hr.ExitCodes) != "[124]" || !strings.Contains(timeout.Step().Error, "timed out after 100ms") {
		t.Fatalf("timed out hook %+v %q", hr, timeout.Step().Error)
	}
	// A loop's own hooks are not shown as an iteration's.
	if d := h.display.String(); !strings.Contains(d, "▶ each.pre_hook\n") || !strings.Contains(d, "▶ each.item.pre_hook [1]\n") {
		t.Fatalf("display:\n%s", d)
	}
}

// capture adds the captured variables to the capturing step's result
// (docs/decisions.md §11), cut at max_size; templates read the output as
// .states.NAME.Output as in AWF.
func TestCaptureInResult(t *testing.T) {
	h := newHarness(t)
	rep := h.succeedFile("capture.yaml", nil)
	evs := readAll(t, rep.TranscriptPath)
	var cr transcript.CommandResult
	a := find(t, evs, transcript.StepCompleted, "a")
	transcript.DecodeResult(a.Step().Result, &cr)
	if cr.Captured["greeting"] != "hél" || cr.Captured["problems"] != "oops" || cr.Output != "héllo world" {
		t.Fatalf("result %+v", cr)
	}
	b := find(t, evs, transcript.StepCompleted, "b")
	cr = transcript.CommandResult{}
	transcript.DecodeResult(b.Step().Result, &cr)
	if cr.Output != "héllo world\n" || cr.Captured != nil {
		t.Fatalf("b %+v", cr)
	}
}

// docs/decisions.md §10 holds for hooks: the audit trail and the display are the
// same with and without the transcript; the display of a hooked run is
// golden (testdata/hooks_display.golden).
func TestHooksAuditAndDisplay(t *testing.T) {
	var displays, audits [][]byte
	for _, off := range []bool{false, true} {
		h := newHarness(t)
		h.e.NoTranscript = off
		rep := h.runFile(context.Background(), "hooks-display.yaml", nil)
		if rep.Status != "success" {
			t.Fatalf("no-transcript=%v: %+v", off, rep)
		}
		audit, err := os.ReadFile(filepath.Join(h.storage, "audit.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		displays = append(displays, normalize(h.display.Bytes()))
		audits = append(audits, normalize(audit))
		if off {
			continue
		}
		// every hook execution has its audit pair
		var n int
		for line := range bytes.SplitSeq(bytes.TrimSpace(audit), []byte("\n")) {
			var a auditEntry
			if err := json.Unmarshal(line, &a); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(a.Path, "_hook") || strings.HasPrefix(a.Path, "workflow_") {
				n++
			}
		}
		if n != 2*7 {
			t.Fatalf("%d hook audit entries:\n%s", n, audit)
		}
	}
	if !bytes.Equal(displays[0], displays[1]) {
		t.Fatalf("display differs:\n--- with transcript\n%s\n--- without\n%s", displays[0], displays[1])
	}
	if !bytes.Equal(audits[0], audits[1]) {
		t.Fatalf("audit differs:\n--- with transcript\n%s\n--- without\n%s", audits[0], audits[1])
	}
	golden.Check(t, filepath.Join("testdata", "hooks_display.golden"), displays[0])
}

// --mask-secrets covers hooks: their commands, output and logs in the
// transcript, the display and the audit trail.
func TestHooksMasked(t *testing.T) {
	const secret = "hunter2-very-secret-value"
	h := newHarness(t)
	h.e.Environ = append(os.Environ(), "DEPLOY_TOKEN="+secret)
	h.e.Masker = secrets.NewMasker(h.e.Environ)
	rep := h.succeedFile("hooks-masked.yaml", nil)
	tr, _ := os.ReadFile(rep.TranscriptPath)
	audit, _ := os.ReadFile(filepath.Join(h.storage, "audit.jsonl"))
	for what, b := range map[string][]byte{"transcript": tr, "audit": audit, "display": h.display.Bytes()} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s shows the secret:\n%s", what, b)
		}
	}
	if !bytes.Contains(tr, []byte("[MASKED]")) || !bytes.Contains(h.display.Bytes(), []byte("[MASKED]")) {
		t.Fatalf("nothing masked:\n%s\n%s", tr, h.display.String())
	}
}

// A single step (--step) runs its own hooks, not the workflow's, as AWF's
// does.
func TestSingleStepRunsItsHooksNotTheWorkflows(t *testing.T) {
	h, logf := hookHarness(t)
	wf := h.loadFile("hooks-single-step.yaml")
	rep, err := h.e.Run(context.Background(), wf, RunOptions{Step: "b"})
	if err != nil || rep.Status != "success" {
		t.Fatalf("%v %+v", err, rep)
	}
	if got := readLog(t, logf); got != "PRE_B\nB\nPOST_B\n" {
		t.Fatalf("hooks of a single step:\n%s", got)
	}
	h.verify()
}
