package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/launch/launchtest"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/runstatus"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/internal/workflow"
)

// project writes workflows into a fresh project's .reel/workflows and
// returns a launcher over its storage.
func project(t *testing.T, workflows map[string]string) (*Launcher, string) {
	t.Helper()
	dir := launchtest.Project(t, workflows)
	e := &engine.Engine{Storage: filepath.Join(dir, "storage"), ProjectDir: dir, Dir: dir, KillGrace: 300 * time.Millisecond}
	l := New(Config{Engine: e})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l.Close(ctx, errors.New("test over"))
	})
	return l, dir
}

func verified(t *testing.T, storage string) {
	t.Helper()
	rep := verify.Paths([]string{storage}, verify.Options{})
	if rep.Violations() > 0 || len(rep.Unreadable) > 0 {
		t.Fatalf("verify: %+v %+v", rep.Problems, rep.Unreadable)
	}
}

const hello = `name: hello
inputs:
  - name: who
    type: string
    required: true
states:
  initial: greet
  greet:
    type: step
    command: echo "hello {{.inputs.who}}"
    on_success: done
  done:
    type: terminal
`

func TestStartRunsAnOrdinaryRun(t *testing.T) {
	l, dir := project(t, map[string]string{"hello": hello})
	given := map[string]string{"who": "ann", "colour": "red"}
	r, err := l.Start(context.Background(), "hello", given)
	if err != nil {
		t.Fatal(err)
	}
	// An input the workflow does not declare is dropped, as AWF drops it,
	// and said.
	if fmt.Sprint(r.Ignored) != "[colour]" || given["colour"] != "red" {
		t.Errorf("ignored %v, the caller's map %v", r.Ignored, given)
	}
	// Start returns once run.started is in the file.
	if b, err := os.ReadFile(r.Transcript); err != nil || !strings.Contains(string(b), `"run.started"`) {
		t.Fatalf("transcript at Start's return: %q %v", b, err)
	}
	rep, err := r.Wait(context.Background())
	if err != nil || rep.Status != runstatus.Success {
		t.Fatalf("report %+v %v", rep, err)
	}
	if got := l.Runs(); len(got) != 1 || got[0].ID != r.ID || got[0].Workflow != "hello" {
		t.Fatalf("Runs = %+v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "storage", "audit.jsonl")); err != nil {
		t.Fatalf("no audit trail: %v", err)
	}
	verified(t, filepath.Join(dir, "storage"))
}

func TestStartRefusals(t *testing.T) {
	l, _ := project(t, map[string]string{"hello": hello, "broken": "name: broken\nstates:\n  initial: nowhere\n"})
	var ie *engine.InputError
	if _, err := l.Start(context.Background(), "hello", nil); !errors.As(err, &ie) {
		t.Errorf("missing input: %v", err)
	}
	if _, err := l.Start(context.Background(), "hello", map[string]string{"colour": "red"}); !errors.As(err, &ie) {
		t.Errorf("missing input beside an undeclared one: %v", err)
	}
	if _, err := l.Start(context.Background(), "absent", nil); !errors.Is(err, workflow.ErrNotFound) {
		t.Errorf("unknown workflow: %v", err)
	}
	var probs workflow.Problems
	if _, err := l.Start(context.Background(), "broken", nil); !errors.As(err, &probs) {
		t.Errorf("invalid workflow: %v", err)
	}
	if n := len(l.Runs()); n != 0 {
		t.Errorf("refused runs are listed: %d", n)
	}
	// An input the workflow does not declare is left out, as AWF and
	// reel run leave it, and named.
	given := map[string]string{"who": "x", "nope": "1"}
	r, err := l.Start(context.Background(), "hello", given)
	if err != nil {
		t.Fatalf("undeclared input: %v", err)
	}
	if !slices.Equal(r.Ignored, []string{"nope"}) || given["nope"] != "1" {
		t.Errorf("Ignored %v, given %v", r.Ignored, given)
	}
	if rep, err := r.Wait(context.Background()); err != nil || rep.Status != runstatus.Success {
		t.Fatalf("report %+v %v", rep, err)
	}
}

func TestCancelKillsAStepThatIgnoresSIGTERM(t *testing.T) {
	l, dir := project(t, map[string]string{"stubborn": launchtest.Stubborn})
	r, err := l.Start(context.Background(), "stubborn", nil)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "stubborn.pid")
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the step never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Cancel(ctx, r.ID, errors.New("asked by a test")); err != nil {
		t.Fatal(err)
	}
	rep := r.Report()
	if rep == nil || rep.Status != runstatus.Cancelled || !strings.Contains(rep.Error, "asked by a test") {
		t.Fatalf("report %+v", rep)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the step's shell %d is still there (%v)", pid, err)
	}
	if s, _ := runs.Open(r.Transcript, runs.Options{}).Summarize(); s.Status != runstatus.Cancelled {
		t.Fatalf("transcript status %q", s.Status)
	}
	verified(t, filepath.Join(dir, "storage"))
	// Cancelling again, or a run never started here.
	if err := l.Cancel(ctx, r.ID, nil); err != nil {
		t.Errorf("second cancel: %v", err)
	}
	if err := l.Cancel(ctx, "0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21", nil); !errors.Is(err, ErrNotLaunched) {
		t.Errorf("unknown run: %v", err)
	}
}

func TestResume(t *testing.T) {
	l, dir := project(t, map[string]string{"flaky": launchtest.Flaky})
	r, err := l.Start(context.Background(), "flaky", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep, _ := r.Wait(context.Background()); rep.Status != runstatus.Failure {
		t.Fatalf("first attempt: %+v", rep)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r2, err := l.Resume(context.Background(), r.ID, ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r2.ID != r.ID || r2.Attempt != 2 {
		t.Fatalf("resumed run %+v", r2)
	}
	if rep, _ := r2.Wait(context.Background()); rep.Status != runstatus.Success {
		t.Fatalf("second attempt: %+v", rep)
	}
	if got := l.Runs(); len(got) != 1 {
		t.Fatalf("a resumed run is listed once: %d", len(got))
	}
	var re *engine.ResumeError
	if _, err := l.Resume(context.Background(), r.ID, ResumeOptions{}); !errors.As(err, &re) {
		t.Errorf("resume of a run that succeeded: %v", err)
	}
	if _, err := l.Resume(context.Background(), "0b8a5a56-2f4e-4b8e-9a55-1c4f5a0d3e21", ResumeOptions{}); !errors.Is(err, ErrNoRun) {
		t.Errorf("unknown run: %v", err)
	}
	if _, err := l.Resume(context.Background(), "../../etc/passwd", ResumeOptions{}); !errors.Is(err, ErrNoRun) {
		t.Errorf("a path for an id: %v", err)
	}
	verified(t, filepath.Join(dir, "storage"))
}

func TestCloseCancelsAndRefuses(t *testing.T) {
	l, dir := project(t, map[string]string{"stubborn": launchtest.Stubborn})
	r, err := l.Start(context.Background(), "stubborn", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.Close(ctx, errors.New("server stopped")); err != nil {
		t.Fatal(err)
	}
	if rep := r.Report(); rep == nil || rep.Status != runstatus.Cancelled {
		t.Fatalf("report after Close: %+v", rep)
	}
	if _, err := l.Start(ctx, "stubborn", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
	verified(t, filepath.Join(dir, "storage"))
}

func TestKeepBoundsTheList(t *testing.T) {
	l, _ := project(t, map[string]string{"hello": hello})
	l.cfg.Keep = 3
	for i := 0; i < 6; i++ {
		r, err := l.Start(context.Background(), "hello", map[string]string{"who": strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		r.Wait(context.Background())
	}
	if n := len(l.Runs()); n != 3 {
		t.Fatalf("%d runs remembered, want 3", n)
	}
}
