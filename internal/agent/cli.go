package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reelhq/reel/internal/normalize"
	"github.com/reelhq/reel/transcript"
)

const (
	// stderrTail is how much of a provider's stderr is kept for error
	// messages; the end is where CLIs print why they failed.
	stderrTail = 4 << 10
	// stdinPromptOver moves prompts longer than this from argv to stdin
	// (for CLIs that read it), far below Linux's 128 KiB per-argument limit.
	stdinPromptOver = 64 << 10
	// waitDelay bounds how long reel waits for a provider's output pipes
	// after the process exited or was killed (a grandchild may hold them).
	waitDelay = 2 * time.Second
)

// cliSpec says how to run one agent CLI.
type cliSpec struct {
	bin    string // default executable name
	env    string // executable override variable
	format normalize.Format
	// stdinPrompt is set for CLIs that read the prompt from stdin when it is
	// not on the command line.
	stdinPrompt bool
	// systemFlag appends the system prompt; empty means the CLI has none
	// and the system prompt is prepended to the prompt.
	systemFlag string
	modelFlag  string
	// args builds the command line from the prompt ("" when it goes to
	// stdin), the session to resume ("" on a conversation's first turn) and
	// the flags reel composed.
	args func(prompt, resume string, flags []string) []string
}

// specFor returns how to run provider's CLI.
func specFor(provider string) (cliSpec, bool) {
	switch provider {
	case "claude":
		// claude -p --output-format stream-json --verbose [--resume ID] [flags] -- PROMPT
		return cliSpec{
			bin: "claude", env: "REEL_CLAUDE_BIN", format: normalize.ClaudeStreamJSON, stdinPrompt: true,
			systemFlag: "--append-system-prompt", modelFlag: "--model",
			args: func(prompt, resume string, flags []string) []string {
				a := []string{"-p", "--output-format", "stream-json", "--verbose"}
				if resume != "" {
					a = append(a, "--resume", resume)
				}
				a = append(a, flags...)
				if prompt != "" {
					a = append(a, "--", prompt)
				}
				return a
			},
		}, true
	case "codex":
		// codex exec --json [flags] [resume ID] -- PROMPT   (or "-" to read stdin)
		return cliSpec{
			bin: "codex", env: "REEL_CODEX_BIN", format: normalize.CodexExecJSON, stdinPrompt: true,
			modelFlag: "--model",
			args: func(prompt, resume string, flags []string) []string {
				a := append([]string{"exec", "--json", "--skip-git-repo-check"}, flags...)
				if resume != "" {
					// exec's own flags stay before the subcommand, where
					// codex exec resume takes them too.
					a = append(a, "resume", resume)
				}
				if prompt == "" {
					prompt = "-"
				}
				return append(a, "--", prompt)
			},
		}, true
	case "gemini":
		// gemini --output-format stream-json [--resume=ID] [flags] --prompt=PROMPT
		return cliSpec{
			bin: "gemini", env: "REEL_GEMINI_BIN", format: normalize.GeminiStreamJSON,
			modelFlag: "--model",
			args: func(prompt, resume string, flags []string) []string {
				a := []string{"--output-format", "stream-json"}
				if resume != "" {
					// --resume alone means "latest"; the = form keeps the
					// id attached to it.
					a = append(a, "--resume="+resume)
				}
				return append(append(a, flags...), "--prompt="+prompt)
			},
		}, true
	case "github_copilot":
		// copilot --output-format json [--resume=ID] [flags] --prompt=PROMPT
		return cliSpec{
			bin: "copilot", env: "REEL_GITHUB_COPILOT_BIN", format: normalize.CopilotJSON,
			modelFlag: "--model",
			args: func(prompt, resume string, flags []string) []string {
				a := []string{"--output-format", "json"}
				if resume != "" {
					a = append(a, "--resume="+resume)
				}
				return append(append(a, flags...), "--prompt="+prompt)
			},
		}, true
	}
	return cliSpec{}, false
}

// cliAgent is a CLI provider configured for one step: every turn of the
// step's conversation runs the same executable with the same flags.
type cliAgent struct {
	provider string
	spec     cliSpec
	path     string   // resolved executable
	flags    []string // model, max_turns and options.args
	system   string
}

// invocation is one run of a CLI, ready to start.
type invocation struct {
	provider string
	path     string // resolved executable
	args     []string
	stdin    string
	format   normalize.Format
	prompt   string
}

func newCLIAgent(req Request) (*cliAgent, error) {
	spec, ok := specFor(req.Provider)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownProvider, req.Provider)
	}
	fail := func(err error) (*cliAgent, error) { return nil, fmt.Errorf("agent %s: %w", req.Provider, err) }
	o := req.Options

	bin, err := optString(o, "command")
	if err != nil {
		return fail(err)
	}
	source := "options.command"
	if bin == "" {
		bin, _ = lookupEnv(req.Env, spec.env)
		source = spec.env
	}
	if bin == "" {
		bin, source = spec.bin, ""
	}
	path, err := lookPath(bin, req.Dir, req.Env)
	if err != nil {
		if source == "" {
			return fail(fmt.Errorf("%w (install it, or point options.command or %s at it)", err, spec.env))
		}
		return fail(fmt.Errorf("%s: %w", source, err))
	}

	var flags []string
	if m, err := optString(o, "model"); err != nil {
		return fail(err)
	} else if m != "" {
		flags = append(flags, spec.modelFlag, m)
	}
	if n, ok, err := optInt(o, "max_turns"); err != nil {
		return fail(err)
	} else if ok {
		if req.Provider != "claude" {
			return fail(errors.New("options.max_turns is supported by claude only (the other CLIs have no such flag)"))
		}
		if n < 1 {
			return fail(fmt.Errorf("options.max_turns %d: want at least 1", n))
		}
		flags = append(flags, "--max-turns", strconv.FormatInt(n, 10))
	}
	extra, _, err := optStrings(o, "args")
	if err != nil {
		return fail(err)
	}
	flags = append(flags, extra...)
	return &cliAgent{provider: req.Provider, spec: spec, path: path, flags: flags, system: req.SystemPrompt}, nil
}

// invocation builds the command line of one turn. resume is the session
// to continue, "" on the first turn.
func (a *cliAgent) invocation(prompt, resume string) *invocation {
	var flags []string
	recorded := prompt
	if a.system != "" {
		if a.spec.systemFlag != "" {
			// The flag configures this process only, so every turn of a
			// conversation passes it again.
			flags = append(flags, a.spec.systemFlag, a.system)
		} else if resume == "" {
			// No system prompt flag: the CLI gets it ahead of the first
			// prompt, where the resumed session keeps it. The transcript
			// still records the two apart (message.user).
			prompt = a.system + "\n\n" + prompt
		}
	}
	flags = append(flags, a.flags...)
	inv := &invocation{provider: a.provider, path: a.path, format: a.spec.format, prompt: recorded}
	if a.spec.stdinPrompt && len(prompt) > stdinPromptOver {
		inv.stdin, prompt = prompt, ""
	}
	inv.args = a.spec.args(prompt, resume, flags)
	return inv
}

// lookPath finds bin the way a shell started with env in dir would: a name
// without a slash is searched in env's PATH, a relative path is taken from
// dir.
func lookPath(bin, dir string, env []string) (string, error) {
	check := func(p string) error {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not an executable file", p)
		}
		return nil
	}
	if strings.Contains(bin, "/") {
		p := bin
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := check(p); err != nil {
			return "", fmt.Errorf("executable %s: %w", bin, err)
		}
		return p, nil
	}
	pathVar, _ := lookupEnv(env, "PATH")
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, bin)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if check(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("executable %q not found in PATH", bin)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max   int
	buf   []byte
	total int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// String returns the kept tail as valid UTF-8 without NUL bytes, trimmed.
func (t *tailBuffer) String() string {
	s := strings.ToValidUTF8(string(t.buf), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	s = strings.TrimSpace(s)
	if int64(len(t.buf)) < t.total {
		s = "…" + s
	}
	return s
}

// stream feeds provider stdout to the parser and remembers the first
// failure, so the process can be stopped when the transcript cannot be
// written.
type stream struct {
	parser *normalize.Parser
	err    error
	stop   context.CancelFunc
}

func (s *stream) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if _, err := s.parser.Write(p); err != nil {
		s.err = err
		s.stop()
		return 0, err
	}
	return len(p), nil
}

func (inv *invocation) run(ctx context.Context, req Request, emit Emit) (*transcript.AgentResult, error) {
	fail := func(res *transcript.AgentResult, err error) (*transcript.AgentResult, error) {
		return res, fmt.Errorf("agent %s: %w", inv.provider, err)
	}
	assistant := 0
	// The prompt is already recorded as the router's message.user; a
	// parser that finds it in the stream again must not record it twice.
	filtered := func(e transcript.ExchangeEvent) error {
		switch e.Type {
		case transcript.MessageUser:
			if m := e.Message(); m != nil && userText(m) == strings.TrimSpace(inv.prompt) {
				return nil
			}
		case transcript.MessageAssistant:
			assistant++
		}
		return emit(e)
	}
	parser, err := normalize.NewParser(inv.format, filtered)
	if err != nil {
		return fail(nil, err)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(runCtx, inv.path, inv.args...)
	cmd.Dir = req.Dir
	cmd.Env = req.Env
	if inv.stdin != "" {
		cmd.Stdin = strings.NewReader(inv.stdin)
	}
	// Its own process group, so a timeout kills the CLI and every tool
	// process it started, not only the CLI.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	out := &stream{parser: parser, stop: stop}
	stderr := &tailBuffer{max: stderrTail}
	cmd.Stdout, cmd.Stderr = out, stderr

	runErr := cmd.Run()
	if errors.Is(runErr, exec.ErrWaitDelay) {
		// The CLI exited cleanly but a background process it started still
		// holds stdout. The step is done; the group kill below ends it.
		runErr = nil
	}
	if cmd.Process != nil {
		// Leftovers of the group (background jobs the agent started) do
		// not outlive the step.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}

	reason := ""
	switch {
	case out.err != nil:
		reason = "transcript write failed"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		reason = "timeout"
	case ctx.Err() != nil:
		reason = "cancelled"
	case runErr != nil:
		reason = describeExit(inv.provider, cmd, runErr)
	}
	parsed, cerr := parser.Close(reason)
	res := &transcript.AgentResult{}
	if parsed != nil {
		res = &parsed.Agent
	}

	switch {
	case out.err != nil:
		return fail(res, fmt.Errorf("record provider output: %w", out.err))
	case cerr != nil:
		return fail(res, fmt.Errorf("record provider output: %w", cerr))
	case ctx.Err() != nil:
		return fail(res, withStderr(fmt.Errorf("%s: %w", reason, ctx.Err()), stderr))
	case runErr != nil:
		if parsed.IsError && parsed.Error != "" {
			return fail(res, withStderr(fmt.Errorf("%s: %s", reason, parsed.Error), stderr))
		}
		return fail(res, withStderr(errors.New(reason), stderr))
	case parsed.IsError:
		return fail(res, withStderr(fmt.Errorf("provider reported an error: %s", parsed.Error), stderr))
	case assistant == 0 && res.Output == "":
		msg := "produced no usable output"
		if len(res.Skipped) > 0 {
			msg += " (skipped: " + normalize.SkippedSummary(res.Skipped) + ")"
		}
		return fail(res, withStderr(errors.New(msg), stderr))
	}
	return res, nil
}

func userText(m *transcript.MessagePayload) string {
	var parts []string
	for _, b := range m.Blocks {
		if b.Type == transcript.BlockText {
			parts = append(parts, b.Text)
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// describeExit names how the process ended.
func describeExit(provider string, cmd *exec.Cmd, err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("%s was killed by signal %s", filepath.Base(cmd.Path), ws.Signal())
		}
		return fmt.Sprintf("%s exited with status %d", filepath.Base(cmd.Path), ee.ExitCode())
	}
	return fmt.Sprintf("run %s: %v", provider, err)
}

func withStderr(err error, stderr *tailBuffer) error {
	if s := stderr.String(); s != "" {
		return fmt.Errorf("%w; stderr: %s", err, s)
	}
	return err
}

var _ io.Writer = (*stream)(nil)
