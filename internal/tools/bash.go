package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// BashResult is the output of the Bash tool.
type BashResult struct {
	Output    string `json:"output"`
	ExitCode  int    `json:"exit_code"`
	Truncated bool   `json:"truncated,omitempty"`
	TimedOut  bool   `json:"timed_out,omitempty"`
}

// headBuffer keeps the first max bytes written to it and counts the rest.
type headBuffer struct {
	max     int
	buf     bytes.Buffer
	dropped int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	room := h.max - h.buf.Len()
	if room >= len(p) {
		h.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		h.buf.Write(p[:room])
	}
	h.dropped += len(p) - max0(room)
	return len(p), nil
}

func shell() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

func (r *Router) bash(ctx context.Context, input json.RawMessage) (any, error) {
	var in struct {
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
	if err := decode("Bash", input, &in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Command) == "" {
		return nil, errors.New("Bash: empty command")
	}
	timeout := r.opts.BashTimeout
	if in.Timeout > 0 && time.Duration(in.Timeout)*time.Second < timeout {
		timeout = time.Duration(in.Timeout) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, shell(), "-c", in.Command)
	cmd.Dir = r.dir
	cmd.Env = r.opts.Env
	// A group of its own, so a timeout kills everything the command started,
	// not only the shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out := &headBuffer{max: r.limit(defaultMaxOutput)}
	cmd.Stdout, cmd.Stderr = out, out

	err := cmd.Run()
	res := BashResult{Output: strings.ToValidUTF8(out.buf.String(), "\uFFFD"), Truncated: out.dropped > 0}
	if res.Truncated {
		res.Output += fmt.Sprintf("\n[output truncated: %d more bytes]", out.dropped)
	}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res.TimedOut = true
		res.ExitCode = -1
		return res, fmt.Errorf("Bash: timed out after %s", timeout)
	case ctx.Err() != nil:
		res.ExitCode = -1
		return res, fmt.Errorf("Bash: %w", ctx.Err())
	case err == nil:
		return res, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return res, fmt.Errorf("Bash: exit status %d", res.ExitCode)
	}
	return res, fmt.Errorf("Bash: %w", err)
}
