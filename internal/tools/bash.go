package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
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

// BashEnv lists the variables the Bash tool passes on from the
// environment without being told: what a shell needs to find programs,
// speak the user's language and write temporary files. Anything else (API
// keys, tokens, cloud credentials, proxies that may carry passwords) is
// passed only when the workflow names it (Options.PassEnv).
var BashEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "TMPDIR", "TZ"}

// bashEnv is the environment of a Bash command: the allowed variables of
// Options.Env.
func (r *Router) bashEnv() []string {
	src := r.opts.Env
	if src == nil {
		src = os.Environ()
	}
	env := []string{}
	for _, kv := range src {
		name, _, ok := strings.Cut(kv, "=")
		if ok && (allowed(name, BashEnv) || slices.Contains(r.opts.PassEnv, name)) {
			env = append(env, kv)
		}
	}
	return env
}

func allowed(name string, list []string) bool {
	for _, a := range list {
		if a == name || strings.HasSuffix(a, "*") && strings.HasPrefix(name, a[:len(a)-1]) {
			return true
		}
	}
	return false
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
	cmd.Env = r.bashEnv()
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
