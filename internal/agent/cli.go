package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/reelhq/reel/internal/mcpproxy"
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

// cliAgent is a CLI provider configured for one step: every turn of the
// step's conversation runs the same executable with the same flags.
type cliAgent struct {
	provider string
	spec     cliSpec
	path     string   // resolved executable
	flags    []string // from the options
	env      []string // added to the step's environment
	system   string
}

// invocation is one run of a CLI, ready to start.
type invocation struct {
	provider string
	path     string // resolved executable
	args     []string
	env      []string
	stdin    string
	format   normalize.Format
	// prompt is the user message as recorded; sent is the text the CLI
	// got, which may carry the system prompt or the conversation so far.
	prompt, sent string
	// px is the MCP proxy serving this run's tools, if the step has one.
	px *mcpproxy.Proxy
}

// proxy wires px into the run: its flags go before the prompt (after
// those reel composed), its variables into the environment.
func (inv *invocation) proxy(px *mcpproxy.Proxy) {
	inv.px = px
	inv.env = append(slices.Clip(inv.env), px.Env...)
	inv.args = insertFlags(inv.provider, inv.args, px.Args)
}

// insertFlags puts flags into a CLI command line args built by its spec:
// before the "--" that ends claude's and codex's options (and before
// codex's resume subcommand), before gemini's and copilot's --prompt, at
// the end otherwise.
func insertFlags(provider string, args, flags []string) []string {
	at := len(args)
	for i, a := range args {
		if a == "--" || provider == "codex" && a == "resume" && i > 0 ||
			(provider == "gemini" || provider == "github_copilot") && strings.HasPrefix(a, "--prompt=") {
			at = i
			break
		}
	}
	out := make([]string, 0, len(args)+len(flags))
	out = append(out, args[:at]...)
	out = append(out, flags...)
	return append(out, args[at:]...)
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
	flags, env, err := cliFlags(spec, o)
	if err != nil {
		return fail(err)
	}
	path, err := lookPath(bin, req.Dir, req.Env)
	if err != nil {
		if source == "" {
			return fail(fmt.Errorf("%w (install it, or point options.command or %s at it)", err, spec.env))
		}
		return fail(fmt.Errorf("%s: %w", source, err))
	}
	return &cliAgent{provider: req.Provider, spec: spec, path: path, flags: flags, env: env, system: req.SystemPrompt}, nil
}

// exchange is one user message and the reply to it, kept for CLIs that
// take the conversation so far in the prompt.
type exchange struct{ user, reply string }

// invocation builds the command line of one turn. resume is the session
// to continue ("" for a new one); first is set on the step's first turn;
// history is the conversation so far, for a CLI that resumes in the
// prompt.
func (a *cliAgent) invocation(prompt, resume string, first bool, history []exchange) *invocation {
	var flags []string
	sent := prompt
	if a.system != "" {
		if a.spec.systemFlag != "" {
			// The flag configures this process only, so every turn of a
			// conversation passes it again.
			flags = append(flags, a.spec.systemFlag, a.system)
		} else if first {
			// No system prompt flag: the CLI gets it ahead of the step's
			// first prompt, where a resumed session keeps it. The
			// transcript still records the two apart (message.user).
			sent = a.system + "\n\n" + sent
		}
	}
	if a.spec.resumeInPrompt && len(history) > 0 {
		sent = conversationSoFar(history, sent)
	}
	flags = append(flags, a.flags...)
	inv := &invocation{provider: a.provider, path: a.path, env: a.env, format: a.spec.format, prompt: prompt, sent: sent}
	arg := sent
	if a.spec.alwaysStdin || a.spec.stdinPrompt && len(sent) > stdinPromptOver {
		inv.stdin, arg = sent, ""
	}
	inv.args = a.spec.args(arg, resume, flags)
	return inv
}

// conversationSoFar frames a follow-up for a CLI that cannot resume its
// own session: the earlier messages, then the new one to answer.
func conversationSoFar(history []exchange, prompt string) string {
	var b strings.Builder
	b.WriteString("This continues an earlier conversation between you and the user, quoted below. Reply to the user's last message.\n\n<conversation>\n")
	for _, e := range history {
		fmt.Fprintf(&b, "<user>\n%s\n</user>\n<assistant>\n%s\n</assistant>\n", e.user, e.reply)
	}
	b.WriteString("</conversation>\n\n")
	b.WriteString(prompt)
	return b.String()
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

// run starts the CLI and normalizes its output. It returns the turn's
// result and, for a CLI whose usage reports are or may be the session's
// running total (codex, claude), that total, so the caller can tell this
// turn's share.
func (inv *invocation) run(ctx context.Context, req Request, emit Emit) (res *transcript.AgentResult, sessionTotal *runningTotal, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("agent %s: %w", inv.provider, err)
		}
	}()
	assistant := 0
	parser, err := normalize.NewParser(inv.format, inv.recorded(emit, &assistant))
	if err != nil {
		if inv.px != nil {
			inv.px.Close("not started")
		}
		return nil, nil, err
	}
	p := inv.execute(ctx, req, parser)
	reason := p.reason(ctx, inv.provider)
	parsed, cerr := parser.Close(reason)
	res = &transcript.AgentResult{}
	if parsed != nil {
		res = &parsed.Agent
		if parsed.SessionTotal != nil {
			sessionTotal = &runningTotal{usage: *parsed.SessionTotal, cost: parsed.SessionCost, query: parsed.QueryUsage}
		}
	}
	if inv.px != nil {
		why := reason
		if why == "" {
			why = filepath.Base(p.cmd.Path) + " exited"
		}
		if perr := inv.px.Close(why); perr != nil && cerr == nil {
			cerr = perr
		}
		res.Proxy = proxyInfo(inv.px)
	}
	return res, sessionTotal, p.verdict(ctx, reason, parsed, res, cerr, assistant)
}

// recorded is the emit the CLI's parser writes to: the router's, or the
// proxy's agent side for a call through the proxy. It counts the
// assistant messages and drops the prompt the stream repeats.
func (inv *invocation) recorded(emit Emit, assistant *int) normalize.Emit {
	down := emit
	if inv.px != nil {
		// The agent's own pair of a call through the proxy is not written:
		// the router's is the record.
		down = inv.px.Agent
	}
	// The prompt is already recorded as the router's message.user; a
	// parser that finds it in the stream again (as recorded, or as sent
	// with what reel put around it) must not record it twice.
	return func(e transcript.ExchangeEvent) error {
		switch e.Type {
		case transcript.MessageUser:
			if m := e.Message(); m != nil {
				if t := userText(m); t == strings.TrimSpace(inv.prompt) || t == strings.TrimSpace(inv.sent) {
					return nil
				}
			}
		case transcript.MessageAssistant:
			*assistant++
		}
		return down(e)
	}
}

// process is how one run of the CLI went.
type process struct {
	cmd    *exec.Cmd
	out    *stream
	stderr *tailBuffer
	err    error // what cmd.Run returned
}

// execute runs the CLI to its end, its stdout into parser, in its own
// process group, which it kills once the CLI is done.
func (inv *invocation) execute(ctx context.Context, req Request, parser *normalize.Parser) *process {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(runCtx, inv.path, inv.args...)
	cmd.Dir = req.Dir
	cmd.Env = append(req.Env[:len(req.Env):len(req.Env)], inv.env...)
	if inv.stdin != "" {
		cmd.Stdin = strings.NewReader(inv.stdin)
	}
	// Its own process group, so a timeout kills the CLI and every tool
	// process it started, not only the CLI.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	p := &process{cmd: cmd, out: &stream{parser: parser, stop: stop}, stderr: &tailBuffer{max: stderrTail}}
	cmd.Stdout, cmd.Stderr = p.out, p.stderr

	p.err = cmd.Run()
	if errors.Is(p.err, exec.ErrWaitDelay) {
		// The CLI exited cleanly but a background process it started still
		// holds stdout. The step is done; the group kill below ends it.
		p.err = nil
	}
	if cmd.Process != nil {
		// Leftovers of the group (background jobs the agent started) do
		// not outlive the step.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return p
}

// reason says why the CLI's output ended early ("" when it ended by
// itself, exit status 0): what the parser is told at Close.
func (p *process) reason(ctx context.Context, provider string) string {
	switch {
	case p.out.err != nil:
		return "transcript write failed"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timeout"
	case ctx.Err() != nil:
		return "cancelled"
	case p.err != nil:
		return describeExit(provider, p.cmd, p.err)
	}
	return ""
}

// verdict is the turn's error: a failed write, the end of ctx, the CLI's
// failure or reported error, or no usable output; nil for a turn that
// replied. cerr is the parser's (or the proxy's) closing error.
func (p *process) verdict(ctx context.Context, reason string, parsed *normalize.Result, res *transcript.AgentResult, cerr error, assistant int) error {
	switch {
	case p.out.err != nil:
		return fmt.Errorf("record provider output: %w", p.out.err)
	case cerr != nil:
		return fmt.Errorf("record provider output: %w", cerr)
	case ctx.Err() != nil:
		return withStderr(fmt.Errorf("%s: %w", reason, ctx.Err()), p.stderr)
	case p.err != nil:
		if parsed.IsError && parsed.Error != "" {
			return withStderr(fmt.Errorf("%s: %s", reason, parsed.Error), p.stderr)
		}
		return withStderr(errors.New(reason), p.stderr)
	case parsed.IsError:
		return withStderr(fmt.Errorf("provider reported an error: %s", parsed.Error), p.stderr)
	case assistant == 0 && res.Output == "":
		msg := "produced no usable output"
		if len(res.Skipped) > 0 {
			msg += " (skipped: " + normalize.SkippedSummary(res.Skipped) + ")"
		}
		return withStderr(errors.New(msg), p.stderr)
	}
	return nil
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
