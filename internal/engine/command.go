package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// Exit codes reel gives to steps it ended itself, as timeout(1) and shells do.
const (
	exitTimeout   = 124
	exitCancelled = 130
)

// try is one attempt of a state. The state's timeout bounds all its
// attempts and the delays between them together, as AWF's does: an attempt
// gets what is left of it, and no attempt starts once it has run out (so
// an attempt that timed out is not retried).
type try struct {
	// n is the attempt (1-based); 0 for a state without retry, whose
	// payloads then omit it.
	n int
	// limit bounds the attempt's work (zero: no timeout).
	limit deadline
	// delay is the wait before the next attempt.
	delay time.Duration
	// decided and again cache whether another attempt follows, so that
	// the post hooks (span.finish) and the retry loop agree; outOfTime
	// says the state's timeout is why none does.
	decided, again, outOfTime bool
}

// deadline bounds a process or a step: it is stopped at at, and its
// failure says timeout ran out.
type deadline struct {
	timeout time.Duration // 0: none
	at      time.Time
}

func after(d time.Duration) deadline {
	if d <= 0 {
		return deadline{}
	}
	return deadline{timeout: d, at: time.Now().Add(d)}
}

// context returns ctx bounded by the deadline.
func (d deadline) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if d.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, d.at)
}

func (d deadline) String() string { return d.timeout.String() }

// attemptNo is the attempt number a span records (0 without retry).
func (t *try) attemptNo() int {
	if t == nil {
		return 0
	}
	return t.n
}

// attempts runs fn once per retry attempt until it succeeds, the failure
// is not retryable, the attempts or the state's timeout are used up, or
// ctx ends.
func (r *run) attempts(ctx context.Context, st *workflow.State, fn func(t *try) outcome) outcome {
	limit := after(st.Timeout)
	rt := st.Retry
	if rt == nil || rt.MaxAttempts <= 1 {
		return fn(&try{limit: limit})
	}
	var out outcome
	for a := 1; ; a++ {
		t := &try{n: a, limit: limit, delay: backoff(rt, a)}
		out = fn(t)
		if !willRetry(st, t, out) {
			return out
		}
		if !sleepCtx(ctx, t.delay) {
			return cancelledOutcome(ctx)
		}
	}
}

// willRetry reports whether attempt t of st, which ended with o, is
// followed by another one. The answer is decided once per attempt.
func willRetry(st *workflow.State, t *try, o outcome) bool {
	if t == nil || t.n < 1 {
		return false
	}
	if !t.decided {
		t.decided = true
		t.again = retriable(st, t.n, o)
		if t.again && t.limit.timeout > 0 && time.Until(t.limit.at) <= t.delay {
			t.again, t.outOfTime = false, true
		}
	}
	return t.again
}

// retriable reports whether attempt n of st, which ended with o, may be
// followed by another, the state's timeout aside.
func retriable(st *workflow.State, n int, o outcome) bool {
	rt := st.Retry
	return !(rt == nil || o.ok || o.cancelled || o.final || o.end != nil || n >= rt.MaxAttempts || !retryable(rt, o.exitCode))
}

func retryable(rt *workflow.Retry, code int) bool {
	if len(rt.RetryableExitCodes) == 0 {
		return true
	}
	for _, c := range rt.RetryableExitCodes {
		if c == code {
			return true
		}
	}
	return false
}

// backoff is the delay after failed attempt n (1-based).
func backoff(rt *workflow.Retry, n int) time.Duration {
	base := float64(rt.InitialDelay)
	var d float64
	switch rt.Backoff {
	case "linear":
		d = base * float64(n)
	case "exponential":
		// a multiplier below 1 shrinks the delay, as in AWF
		d = base * math.Pow(rt.Multiplier, float64(n-1))
	default:
		d = base
	}
	if rt.MaxDelay > 0 && d > float64(rt.MaxDelay) {
		d = float64(rt.MaxDelay)
	}
	if rt.Jitter > 0 {
		// spread ±jitter around d so that retries of parallel steps do not
		// hit a shared resource in lockstep
		d += d * rt.Jitter * (2*rand.Float64() - 1)
	}
	if d < 0 || math.IsNaN(d) {
		d = 0
	}
	if d > float64(math.MaxInt64) {
		d = float64(math.MaxInt64)
	}
	return time.Duration(d)
}

func (r *run) execCommand(ctx context.Context, sc scope, st *workflow.State) outcome {
	return r.attempts(ctx, st, func(t *try) outcome {
		data := r.data(sc)
		scr, err := r.script(st, data)
		if err != nil {
			sp := r.startStep(ctx, sc, st, transcript.KindCommand, "", t)
			o := unrenderable(sc, err)
			r.setState(st.Name, stateValue(o, "", ""))
			sp.finish(ctx, o, transcript.CommandResult{ExitCode: 1})
			return o
		}
		dir, err := r.stepDir(st, data)
		sp := r.startStep(ctx, sc, st, transcript.KindCommand, scr.text, t)
		if err != nil {
			o := fail("dir: %v", err)
			r.setState(st.Name, stateValue(o, "", ""))
			sp.finish(ctx, o, transcript.CommandResult{ExitCode: 1})
			return o
		}
		res, o := r.runScript(ctx, sp.path, scr, dir, t.limit)
		r.setState(st.Name, stateValue(o, res.Output, res.Stderr))
		sp.finish(ctx, o, r.recorded(res))
		return o
	})
}

// shellPath is $SHELL when it names an executable, else /bin/sh.
func (r *run) shellPath() string {
	if s, _ := r.env["SHELL"].(string); s != "" {
		if fi, err := os.Stat(s); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return s
		}
	}
	return "/bin/sh"
}

// shell runs script with `$SHELL -c` in its own process group, so that a
// timeout or a cancel ends everything it started.
func (r *run) shell(ctx context.Context, path, script, dir string, limit deadline) (transcript.CommandResult, outcome) {
	return r.process(ctx, path, []string{r.shellPath(), "-c", script}, dir, limit)
}

// process runs argv in its own process group, showing its output under
// path in the display; limit stops it.
func (r *run) process(ctx context.Context, path string, argv []string, dir string, limit deadline) (transcript.CommandResult, outcome) {
	start := time.Now()
	sctx, cancel := limit.context(ctx)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if dir == "" {
		cmd.Dir = r.e.Dir
	} else if !filepath.IsAbs(dir) && r.e.Dir != "" {
		cmd.Dir = filepath.Join(r.e.Dir, dir)
	}
	cmd.Env = append(r.e.environ(), "REEL_RUN_ID="+r.id, "REEL_STEP_PATH="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Templates read the whole output, as in AWF, up to stepOutputMax: a
	// step that prints more is stopped and fails, never silently cut.
	// The transcript keeps less (recorded).
	over := make(chan struct{})
	var overOnce sync.Once
	overflow := func() { overOnce.Do(func() { close(over) }) }
	stdout := &cappedBuffer{limit: r.e.stepOutputMax(), full: overflow}
	stderr := &cappedBuffer{limit: r.e.stepOutputMax(), full: overflow}
	// one display writer per stream: exec copies each pipe in its own
	// goroutine
	showOut := r.newOutputWriter(path)
	showErr := r.outputWriterWith(showOut.prefix)
	cmd.Stdout = teeWriter{stdout, showOut}
	cmd.Stderr = teeWriter{stderr, showErr}
	// Wait returns this long after the shell exits even when a background
	// child still holds the output pipes open.
	cmd.WaitDelay = r.e.killGrace() + time.Second

	if cmd.Dir != "" {
		if fi, err := os.Stat(cmd.Dir); err != nil || !fi.IsDir() {
			o := fail("dir %s: not a directory", cmd.Dir)
			return transcript.CommandResult{ExitCode: 1, Stderr: o.err}, o
		}
	}
	cmd, err := startCommand(cmd, argv)
	if err != nil {
		o := fail("start %s: %v", argv[0], err)
		o.exitCode = 127
		return transcript.CommandResult{ExitCode: 127, Stderr: err.Error(), DurationMS: time.Since(start).Milliseconds()}, o
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var stopped, tooLong bool
	select {
	case err = <-done:
	case <-over:
		stopped, tooLong = true, true
	case <-sctx.Done():
		stopped = true
	}
	if stopped {
		err = r.stopGroup(pgid, done)
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// the shell exited cleanly; a background child kept the pipes
		err = nil
	}
	showOut.flush()
	showErr.flush()

	res := transcript.CommandResult{
		Output:     stdout.String(),
		Stderr:     stderr.String(),
		DurationMS: time.Since(start).Milliseconds(),
	}
	var o outcome
	switch {
	case tooLong:
		stream := "stdout"
		if stderr.truncated {
			stream = "stderr"
		}
		o = fail("%s passed %s, the most a step's output may hold: the step was stopped (its output is not cut silently)", stream, sizeText(r.e.stepOutputMax()))
	case stopped && ctx.Err() != nil:
		o = cancelledOutcome(ctx)
		o.exitCode = exitCancelled
	case stopped:
		o = fail("timed out after %s", limit)
		o.exitCode = exitTimeout
	case err == nil:
		o = outcome{ok: true}
	default:
		o = exitOutcome(err, res.Stderr)
	}
	res.ExitCode = o.exitCode
	return res, o
}

// stopGroup stops a step's process group: SIGTERM, SIGKILL after the
// grace period, and SIGKILL to whatever of the group is left, since nothing
// of a stopped step may outlive it. It returns what Wait returned.
func (r *run) stopGroup(pgid int, done <-chan error) error {
	var err error
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	grace := time.NewTimer(r.e.killGrace())
	select {
	case err = <-done:
	case <-grace.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		err = <-done
	}
	grace.Stop()
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return err
}

// startCommand starts cmd, again when a script just written is still held open
// for a moment by another goroutine's fork (ETXTBSY, golang/go#22315).
func startCommand(cmd *exec.Cmd, argv []string) (*exec.Cmd, error) {
	err := cmd.Start()
	for try := 1; errors.Is(err, syscall.ETXTBSY) && try <= 10; try++ {
		time.Sleep(time.Duration(try) * 5 * time.Millisecond)
		c := exec.Command(argv[0], argv[1:]...)
		c.Dir, c.Env, c.SysProcAttr, c.Stdout, c.Stderr, c.WaitDelay = cmd.Dir, cmd.Env, cmd.SysProcAttr, cmd.Stdout, cmd.Stderr, cmd.WaitDelay
		cmd = c
		err = cmd.Start()
	}
	return cmd, err
}

// exitOutcome is the failure of a command that exited non-zero or was
// killed, with the last line of its stderr.
func exitOutcome(err error, stderr string) outcome {
	o := outcome{exitCode: exitCode(err), err: "exit status " + fmt.Sprint(exitCode(err))}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.err = "killed by signal " + ws.Signal().String()
		}
	} else {
		o.err = err.Error()
	}
	if msg := lastLine(stderr); msg != "" {
		o.err += ": " + msg
	}
	return o
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		// Cut after the word at byte 200, not inside it: half a secret is
		// no longer a shape the masker recognises.
		cut := 200
		for cut < len(s) && cut < 1024 && !isSpace(s[cut]) {
			cut++
		}
		if cut < len(s) {
			s = s[:cut] + "…"
		}
	}
	return s
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		if c := ee.ExitCode(); c >= 0 {
			return c
		}
	}
	return 1
}

// cappedBuffer keeps the first limit bytes written and notes the rest
// (truncated, and full called once).
type cappedBuffer struct {
	limit     int
	b         strings.Builder
	truncated bool
	full      func()
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.limit - c.b.Len(); room > 0 {
		if len(p) > room {
			c.b.Write(p[:room])
			c.cut()
		} else {
			c.b.Write(p)
		}
	} else if len(p) > 0 {
		c.cut()
	}
	return len(p), nil
}

func (c *cappedBuffer) cut() {
	c.truncated = true
	if c.full != nil {
		c.full()
	}
}

func (c *cappedBuffer) String() string { return c.b.String() }

// recorded is res as the transcript keeps it: output and stderr cut at
// the engine's OutputLimit, Truncated saying so (docs/decisions.md §6); templates
// read the whole of them.
func (r *run) recorded(res transcript.CommandResult) transcript.CommandResult {
	limit := r.e.outputLimit()
	res.Output = capText(res.Output, limit, &res.Truncated)
	res.Stderr = capText(res.Stderr, limit, &res.Truncated)
	return res
}

// sizeText writes n bytes as reel's docs do (64 MiB, 64 KiB).
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// teeWriter writes to both; the display never fails a step.
type teeWriter struct {
	keep *cappedBuffer
	show *outputWriter
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.keep.Write(p)
	t.show.Write(p)
	return len(p), nil
}
