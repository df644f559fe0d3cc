package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/runstatus"
)

// A run cut short in a step (cancelled by SIGINT, or killed) and resumed
// to success stands where the resume left it: every step succeeded once,
// the step the first attempt was cut short in counted by its re-run, the
// retried failure by its retry, and the attempt named. reel status, reel
// runs and the run index agree.
func TestStatusAfterResume(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			// b sleeps the first time (until the signal), and returns at
			// once when the resume runs it again; c fails once, then its
			// retry succeeds.
			writeFile(t, filepath.Join(dir, "wf.yaml"), `
name: sleepy
states:
  initial: a
  a: {type: step, command: 'echo a', on_success: b}
  b: {type: step, command: 'if [ -e started ]; then echo again; else touch started; sleep 30; fi', on_success: c}
  c:
    type: step
    command: 'if [ -e failed-once ]; then echo c; else touch failed-once; exit 3; fi'
    retry: {max_attempts: 2, initial_delay: 1ms}
    on_success: done
  done: {type: terminal}
`, 0o644)
			storage := filepath.Join(dir, "st")
			cmd, id := startRun(t, dir, "run", "wf.yaml", "--storage", storage)
			defer cmd.Process.Kill()
			waitForFile(t, filepath.Join(dir, "started"), "step b never started")
			cmd.Process.Signal(sig)
			cmd.Wait()
			if res := runBinary(t, dir, "resume", id, "--storage", storage); res.code != 0 {
				t.Fatalf("resume: %+v", res)
			}

			st := runBinary(t, dir, "status", id, "--storage", storage, "--json")
			var at exectree.Standing
			if err := json.Unmarshal([]byte(st.stdout), &at); err != nil {
				t.Fatalf("status --json: %v\n%s", err, st.stdout)
			}
			want := runstatus.StepCounts{Succeeded: 4, Rerun: 1}
			if at.Status != runstatus.Success || at.Attempts != 2 || at.Steps != want || len(at.Open)+len(at.Failed) != 0 {
				t.Fatalf("status --json: steps %+v, want %+v\n%s", at.Steps, want, st.stdout)
			}
			text := runBinary(t, dir, "status", id, "--storage", storage).stdout
			for _, w := range []string{"(attempt 2, resumed)", "steps      4 succeeded, 0 failed; 1 step re-run after resume"} {
				if !strings.Contains(text, w) {
					t.Errorf("status lacks %q:\n%s", w, text)
				}
			}
			for _, w := range []string{"cancelled", "interrupted", "cut short", "resume     reel resume"} {
				if strings.Contains(text, w) {
					t.Errorf("status of a run resumed to success says %q:\n%s", w, text)
				}
			}

			var rows []struct {
				Status      string `json:"status"`
				Steps       int    `json:"steps"`
				FailedSteps int    `json:"failed_steps"`
			}
			res := runBinary(t, dir, "runs", "--storage", storage, "--json")
			if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil || len(rows) != 1 {
				t.Fatalf("runs --json: %v\n%s", err, res.stdout)
			}
			if r := rows[0]; r.Status != runstatus.Success || r.Steps != 4 || r.FailedSteps != 0 {
				t.Errorf("runs --json: %+v, want 4 steps, none failed", r)
			}

			tree := runBinary(t, dir, "tree", id, "--storage", storage, "--json").stdout
			for _, w := range []string{`"superseded": "resume"`, `"superseded": "retry"`} {
				if !strings.Contains(tree, w) {
					t.Errorf("tree --json lacks %s:\n%s", w, tree)
				}
			}
		})
	}
}
