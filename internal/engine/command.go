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

// attempts runs fn once per retry attempt until it succeeds, the failure
// is not retryable, the attempts are used up or ctx ends. attempt is 0 when
// the state has no retry (the payload then omits it).
func (r *run) attempts(ctx context.Context, st *workflow.State, fn func(attempt int) outcome) outcome {
	rt := st.Retry
	if rt == nil || rt.MaxAttempts <= 1 {
		return fn(0)
	}
	var out outcome
	for a := 1; a <= rt.MaxAttempts; a++ {
		out = fn(a)
		if !willRetry(st, a, out) {
			return out
		}
		if !sleepCtx(ctx, backoff(rt, a)) {
			return cancelledOutcome(ctx)
		}
	}
	return out
}

// willRetry reports whether attempt (1-based; 0 for a state without retry)
// of st, which ended with o, is followed by another one.
func willRetry(st *workflow.State, attempt int, o outcome) bool {
	rt := st.Retry
	if rt == nil || rt.MaxAttempts <= 1 || attempt < 1 {
		return false
	}
	return !(o.ok || o.cancelled || o.final || o.end != nil || attempt >= rt.MaxAttempts || !retryable(rt, o.exitCode))
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
	return r.attempts(ctx, st, func(attempt int) outcome {
		data := r.data(sc)
		scr, err := r.script(st, data)
		if err != nil {
			sp := r.startStep(ctx, sc, st, transcript.KindCommand, "", attempt)
			o := unrenderable(sc, err)
			r.setState(st.Name, stateValue(o, "", ""))
			sp.finish(ctx, o, transcript.CommandResult{ExitCode: 1})
			return o
		}
		dir, err := st.Dir.Execute(data)
		sp := r.startStep(ctx, sc, st, transcript.KindCommand, scr.text, attempt)
		if err != nil {
			o := fail("dir: %v", err)
			r.setState(st.Name, stateValue(o, "", ""))
			sp.finish(ctx, o, transcript.CommandResult{ExitCode: 1})
			return o
		}
		res, o := r.runScript(ctx, sp.path, scr, dir, st.Timeout)
		r.setState(st.Name, stateValue(o, res.Output, res.Stderr))
		sp.finish(ctx, o, res)
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
func (r *run) shell(ctx context.Context, path, script, dir string, timeout time.Duration) (transcript.CommandResult, outcome) {
	return r.process(ctx, path, []string{r.shellPath(), "-c", script}, dir, timeout)
}

// process runs argv in its own process group, showing its output under
// path in the display.
func (r *run) process(ctx context.Context, path string, argv []string, dir string, timeout time.Duration) (transcript.CommandResult, outcome) {
	start := time.Now()
	sctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if dir == "" {
		cmd.Dir = r.e.Dir
	} else if !filepath.IsAbs(dir) && r.e.Dir != "" {
		cmd.Dir = filepath.Join(r.e.Dir, dir)
	}
	cmd.Env = append(r.e.environ(), "REEL_RUN_ID="+r.id, "REEL_STEP_PATH="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	limit := r.e.outputLimit()
	stdout := &cappedBuffer{limit: limit}
	stderr := &cappedBuffer{limit: limit}
	// one display writer per stream: exec copies each pipe in its own
	// goroutine
	showOut, showErr := r.newOutputWriter(path), r.newOutputWriter(path)
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
	err := cmd.Start()
	for try := 1; errors.Is(err, syscall.ETXTBSY) && try <= 10; try++ {
		// A script just written can be held open for a moment by another
		// goroutine's fork (golang/go#22315): try again.
		time.Sleep(time.Duration(try) * 5 * time.Millisecond)
		c := exec.Command(argv[0], argv[1:]...)
		c.Dir, c.Env, c.SysProcAttr, c.Stdout, c.Stderr, c.WaitDelay = cmd.Dir, cmd.Env, cmd.SysProcAttr, cmd.Stdout, cmd.Stderr, cmd.WaitDelay
		cmd = c
		err = cmd.Start()
	}
	if err != nil {
		o := fail("start %s: %v", argv[0], err)
		o.exitCode = 127
		return transcript.CommandResult{ExitCode: 127, Stderr: err.Error(), DurationMS: time.Since(start).Milliseconds()}, o
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var stopped bool
	select {
	case err = <-done:
	case <-sctx.Done():
		stopped = true
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		grace := time.NewTimer(r.e.killGrace())
		select {
		case err = <-done:
		case <-grace.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			err = <-done
		}
		grace.Stop()
	}
	if stopped {
		// nothing of a stopped step may outlive it
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
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
		Truncated:  stdout.truncated || stderr.truncated,
		DurationMS: time.Since(start).Milliseconds(),
	}
	var o outcome
	switch {
	case stopped && ctx.Err() != nil:
		o = cancelledOutcome(ctx)
		o.exitCode = exitCancelled
	case stopped:
		o = fail("timed out after %s", timeout)
		o.exitCode = exitTimeout
	case err == nil:
		o = outcome{ok: true}
	default:
		o = outcome{exitCode: exitCode(err), err: "exit status " + fmt.Sprint(exitCode(err))}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				o.err = "killed by signal " + ws.Signal().String()
			}
		} else {
			o.err = err.Error()
		}
		if msg := lastLine(res.Stderr); msg != "" {
			o.err += ": " + msg
		}
	}
	res.ExitCode = o.exitCode
	return res, o
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

// cappedBuffer keeps the first limit bytes written and counts the rest.
type cappedBuffer struct {
	limit     int
	b         []byte
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.limit - len(c.b); room > 0 {
		if len(p) > room {
			c.b = append(c.b, p[:room]...)
			c.truncated = true
		} else {
			c.b = append(c.b, p...)
		}
	} else if len(p) > 0 {
		c.truncated = true
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string { return string(c.b) }

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
