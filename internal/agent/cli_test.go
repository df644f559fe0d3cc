package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

func fakeAgent(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fake-agent.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func cliTestdata(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "cli", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// script writes an executable shell script into a temp dir.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func baseEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH")}, extra...)
}

// replayRequest runs provider through fake-agent.sh replaying file.
func replayRequest(t *testing.T, provider, file string) (Request, string) {
	t.Helper()
	argsFile := filepath.Join(t.TempDir(), "args.txt")
	return Request{
		Provider: provider,
		Prompt:   "Summarize the repository.",
		Options:  map[string]any{"command": fakeAgent(t)},
		Dir:      t.TempDir(),
		Env:      baseEnv("REEL_FAKE_AGENT_REPLAY="+file, "REEL_FAKE_AGENT_ARGS="+argsFile),
	}, argsFile
}

func readArgs(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each CLI provider, run for real through a fake executable replaying a
// shared recording, yields the golden event sequence.
func TestCLIProvidersReplayFixtures(t *testing.T) {
	cases := []struct {
		provider, dir, file string
		wantOutput          string
		wantArgs            string
		tools               int
	}{
		{"claude", "claude-stream-json", "claude_autocompact_2.1.285.jsonl", "", "-p\n--output-format\nstream-json\n--verbose\n--\nSummarize the repository.\n--stdin--\n", -1},
		{"codex", "codex-exec-json", "agentcmd-stream-output-2.jsonl", "Files here: `stream-output-1.jsonl`, `stream-output-2.jsonl`, `test.js`.",
			"exec\n--json\n--skip-git-repo-check\n--\nSummarize the repository.\n--stdin--\n", 1},
		{"gemini", "gemini-stream-json", "gemini_stream_success.jsonl", "The command output `hello`.",
			"--output-format\nstream-json\n--prompt=Summarize the repository.\n--stdin--\n", 2},
		{"github_copilot", "copilot-json", "heru_copilot_stream.jsonl", "",
			"--output-format\njson\n--prompt=Summarize the repository.\n--stdin--\n", 1},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			fixture := filepath.Join(testfixtures.Dir(t, tc.dir), tc.file)
			req, argsFile := replayRequest(t, tc.provider, fixture)
			c := newCollector(t)
			res, err := Run(context.Background(), req, c.emit)
			if err != nil {
				t.Fatal(err)
			}
			if got := readArgs(t, argsFile); got != tc.wantArgs {
				t.Errorf("argv = %q, want %q", got, tc.wantArgs)
			}
			if res.Provider != tc.provider || res.Output == "" || (tc.wantOutput != "" && res.Output != tc.wantOutput) {
				t.Errorf("result = %+v", res)
			}
			if c.events[0].Type != transcript.MessageUser || c.events[0].Message().Blocks[0].Fidelity != transcript.FidelityRouter {
				t.Errorf("first event = %+v", c.events[0])
			}
			fid := c.checkPairs(t)
			if fid[transcript.FidelityRouter] != 0 || (tc.tools >= 0 && fid[transcript.FidelityAgentEmitted] != tc.tools) {
				t.Errorf("tool calls by fidelity = %v, want %d agent_emitted", fid, tc.tools)
			}
			golden.Check(t, filepath.Join("testdata", "golden", "cli-"+tc.provider+".jsonl"), c.render(t))
		})
	}
}

func TestCLIOwnRecordingWithJSONOutput(t *testing.T) {
	req, argsFile := replayRequest(t, "claude", cliTestdata(t, "claude-tool-json.jsonl"))
	req.SystemPrompt = "Answer in JSON."
	req.OutputFormat = "json"
	req.Options["model"] = "sonnet"
	req.Options["max_turns"] = 3
	req.Options["args"] = []any{"--permission-mode", "acceptEdits"}
	c := newCollector(t)
	res, err := Run(context.Background(), req, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := "-p\n--output-format\nstream-json\n--verbose\n--append-system-prompt\nAnswer in JSON.\n--model\nsonnet\n--max-turns\n3\n--permission-mode\nacceptEdits\n--\nSummarize the repository.\n--stdin--\n"
	if got := readArgs(t, argsFile); got != want {
		t.Errorf("argv = %q\nwant   %q", got, want)
	}
	if res.Output != `{"files": ["a.txt", "b.txt"]}` || res.Model != "claude-sonnet-4-5-20250929" || res.SessionID == "" ||
		res.CostUSD == nil || *res.CostUSD != 0.0123 || res.Usage.InputTokens != 52+1024 || res.Usage.CacheReadTokens != 1024 || res.Usage.OutputTokens != 42 {
		t.Errorf("result = %+v", res)
	}
	if m := c.events[0].Message(); len(m.Blocks) != 2 || m.Blocks[1].Text != "Answer in JSON." {
		t.Errorf("message.user = %+v", m)
	}
	c.checkPairs(t)
	golden.Check(t, filepath.Join("testdata", "golden", "cli-claude-own.jsonl"), c.render(t))
}

func TestCLIJSONOutputThatIsNotJSON(t *testing.T) {
	fixture := filepath.Join(testfixtures.Dir(t, "gemini-stream-json"), "gemini_stream_success.jsonl")
	req, _ := replayRequest(t, "gemini", fixture)
	req.OutputFormat = "json"
	res, err := Run(context.Background(), req, newCollector(t).emit)
	if !errors.Is(err, ErrNotJSON) || !strings.Contains(err.Error(), "The command output") {
		t.Fatalf("err = %v", err)
	}
	if res == nil || res.Output != "The command output `hello`." {
		t.Errorf("result = %+v", res)
	}
}

// Providers without a system prompt flag get it ahead of the prompt; the
// model option maps to each CLI's flag; the executable comes from the
// environment override.
func TestCLIArgsAndEnvOverride(t *testing.T) {
	fixture := cliTestdata(t, "claude-tool-json.jsonl")
	for _, tc := range []struct{ provider, env, want string }{
		{"codex", "REEL_CODEX_BIN", "exec\n--json\n--skip-git-repo-check\n--model\ngpt-5\n--\nBe brief.\n\n-rf starts with a dash\n--stdin--\n"},
		{"gemini", "REEL_GEMINI_BIN", "--output-format\nstream-json\n--model\ngpt-5\n--prompt=Be brief.\n\n-rf starts with a dash\n--stdin--\n"},
		{"github_copilot", "REEL_GITHUB_COPILOT_BIN", "--output-format\njson\n--model\ngpt-5\n--prompt=Be brief.\n\n-rf starts with a dash\n--stdin--\n"},
		{"claude", "REEL_CLAUDE_BIN", "-p\n--output-format\nstream-json\n--verbose\n--append-system-prompt\nBe brief.\n--model\ngpt-5\n--\n-rf starts with a dash\n--stdin--\n"},
	} {
		argsFile := filepath.Join(t.TempDir(), "args")
		req := Request{
			Provider: tc.provider, Prompt: "-rf starts with a dash", SystemPrompt: "Be brief.",
			Options: map[string]any{"model": "gpt-5"}, Dir: t.TempDir(),
			Env: baseEnv(tc.env+"="+fakeAgent(t), "REEL_FAKE_AGENT_REPLAY="+fixture, "REEL_FAKE_AGENT_ARGS="+argsFile),
		}
		// The replayed stream is claude's; only the argv matters here.
		_, _ = Run(context.Background(), req, newCollector(t).emit)
		if got := readArgs(t, argsFile); got != tc.want {
			t.Errorf("%s argv = %q\nwant %q", tc.provider, got, tc.want)
		}
	}
}

func TestCLILongPromptGoesThroughStdin(t *testing.T) {
	req, argsFile := replayRequest(t, "claude", cliTestdata(t, "claude-tool-json.jsonl"))
	req.Prompt = strings.Repeat("long prompt ", 20000)
	c := newCollector(t)
	if _, err := Run(context.Background(), req, c.emit); err != nil {
		t.Fatal(err)
	}
	if got := readArgs(t, argsFile); got != "-p\n--output-format\nstream-json\n--verbose\n--stdin--\n"+req.Prompt {
		t.Errorf("argv/stdin = %.120q…", got)
	}
	if c.events[0].Message().Blocks[0].Text != req.Prompt {
		t.Error("message.user does not carry the full prompt")
	}
}

func TestCLIOptionErrors(t *testing.T) {
	cases := []struct {
		provider string
		opts     map[string]any
		env      []string
		want     string
	}{
		{"claude", map[string]any{"command": "/nonexistent/claude"}, nil, "options.command: executable /nonexistent/claude"},
		{"codex", nil, []string{"REEL_CODEX_BIN=no-such-codex-binary"}, `REEL_CODEX_BIN: executable "no-such-codex-binary" not found in PATH`},
		{"gemini", map[string]any{"command": "./testdata"}, nil, "not an executable file"},
		{"codex", map[string]any{"command": fakeAgentPath(), "max_turns": 3}, nil, "max_turns is supported by claude and mistral_vibe only"},
		{"claude", map[string]any{"command": fakeAgentPath(), "args": "--x"}, nil, ""},
		{"claude", map[string]any{"command": fakeAgentPath(), "args": []any{1}}, nil, "options.args[0]: want a string"},
		{"nope", nil, nil, `unknown agent provider "nope"`},
	}
	for _, tc := range cases {
		c := newCollector(t)
		dir, _ := os.Getwd()
		req := Request{Provider: tc.provider, Prompt: "p", Options: tc.opts, Dir: dir, Env: append(baseEnv("PATH=/nonexistent"), tc.env...)}
		_, err := Run(context.Background(), req, c.emit)
		if tc.want == "" {
			continue // accepted; the run fails later for lack of a replay file
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: err = %v, want %q", tc.provider, tc.opts, err, tc.want)
		}
		if len(c.events) != 0 {
			t.Errorf("%s %v: a configuration error recorded %d events", tc.provider, tc.opts, len(c.events))
		}
	}
	// Without an override the default name is searched in the step's PATH.
	_, err := Run(context.Background(), Request{Provider: "claude", Prompt: "p", Dir: t.TempDir(), Env: []string{"PATH=" + t.TempDir()}}, newCollector(t).emit)
	if err == nil || !strings.Contains(err.Error(), `executable "claude" not found in PATH (install it, or point options.command or REEL_CLAUDE_BIN at it)`) {
		t.Errorf("default binary: %v", err)
	}
}

func fakeAgentPath() string {
	p, _ := filepath.Abs(filepath.Join("testdata", "fake-agent.sh"))
	return p
}

// A provider that dies mid-stream: what it printed is kept, the dangling
// tool use is closed, and the error names the exit status and stderr.
func TestCLIDiesMidStream(t *testing.T) {
	bin := script(t, `head -n 2 "`+cliTestdata(t, "claude-tool-json.jsonl")+`"; echo "fatal: connection reset" >&2; exit 3`)
	c := newCollector(t)
	res, err := Run(context.Background(), Request{Provider: "claude", Prompt: "p", Options: map[string]any{"command": bin}, Dir: t.TempDir(), Env: baseEnv()}, c.emit)
	if err == nil || !strings.Contains(err.Error(), "agent.sh exited with status 3") || !strings.Contains(err.Error(), "stderr: fatal: connection reset") {
		t.Fatalf("err = %v", err)
	}
	// The normalizer records the tool.call as soon as it sees the tool_use,
	// before the message holding it is complete.
	want := []transcript.EventType{transcript.MessageUser, transcript.ToolCall, transcript.MessageAssistant, transcript.ToolResult}
	if got := c.types(); !equalTypes(got, want) {
		t.Fatalf("events = %v", got)
	}
	if r := c.events[3].Tool(); r.CallID != "toolu_01X" || r.Error != "no result: agent.sh exited with status 3" || r.Fidelity != transcript.FidelityAgentEmitted {
		t.Errorf("closing result = %+v", r)
	}
	if res == nil || res.Output != "Listing the files first." {
		t.Errorf("partial result = %+v", res)
	}
}

func TestCLIKilledBySignal(t *testing.T) {
	bin := script(t, `head -n 2 "`+cliTestdata(t, "claude-tool-json.jsonl")+`"; kill -9 $$`)
	c := newCollector(t)
	_, err := Run(context.Background(), Request{Provider: "claude", Prompt: "p", Options: map[string]any{"command": bin}, Dir: t.TempDir(), Env: baseEnv()}, c.emit)
	if err == nil || !strings.Contains(err.Error(), "killed by signal killed") {
		t.Fatalf("err = %v", err)
	}
	c.checkPairs(t)
}

// Garbage, NUL bytes and invalid UTF-8 around a valid stream: every event
// still encodes, the valid content is kept, and the junk is counted.
func TestCLIGarbageAroundValidStream(t *testing.T) {
	dir := t.TempDir()
	rec, err := os.ReadFile(cliTestdata(t, "claude-tool-json.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(rec, []byte("\n"))
	var buf bytes.Buffer
	buf.WriteString("Warning: something noisy\n\x00\x00\x00\n\xff\xfe garbage \xc3\x28\n")
	buf.Write(lines[0])
	buf.WriteString(`{"type":"assistant","message":{"id":"msg_bad","role":"assistant","content":[{"type":"text","text":"bad \u0000 nul and ` + "\xff\xfe" + ` bytes"}]}}` + "\n")
	buf.WriteString("{not json at all\n")
	for _, l := range lines[1:] {
		buf.Write(l)
	}
	buf.WriteString("\x00trailing")
	f := filepath.Join(dir, "garbage.jsonl")
	if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	req, _ := replayRequest(t, "claude", f)
	c := newCollector(t)
	res, err := Run(context.Background(), req, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "a.txt") || len(res.Skipped) == 0 {
		t.Errorf("result = %+v", res)
	}
	c.checkPairs(t)
	found := false
	for _, e := range c.events {
		if m := e.Message(); m != nil && e.Type == transcript.MessageAssistant {
			for _, b := range m.Blocks {
				if strings.HasPrefix(b.Text, "bad ") {
					found = true
					if !strings.Contains(b.Text, "\uFFFD") {
						t.Errorf("invalid UTF-8 not replaced: %q", b.Text)
					}
				}
			}
		}
	}
	if !found {
		t.Error("the message with NUL and invalid UTF-8 was dropped")
	}
}

func TestCLIPureGarbageIsAClearError(t *testing.T) {
	bin := script(t, `printf 'Segmentation fault\n\000\377\376\n<html>503</html>\n'`)
	c := newCollector(t)
	_, err := Run(context.Background(), Request{Provider: "codex", Prompt: "p", Options: map[string]any{"command": bin}, Dir: t.TempDir(), Env: baseEnv()}, c.emit)
	if err == nil || !strings.Contains(err.Error(), "produced no usable output (skipped: ") {
		t.Fatalf("err = %v", err)
	}
	if got := c.types(); len(got) != 1 {
		t.Errorf("events = %v", got)
	}
}

// A 20 MB line (over the 16 MiB line limit) is dropped and counted; the
// lines around it survive.
func TestCLIHugeLine(t *testing.T) {
	dir := t.TempDir()
	rec, err := os.ReadFile(cliTestdata(t, "claude-tool-json.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(rec, []byte("\n"))
	f, err := os.Create(filepath.Join(dir, "huge.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(lines[0])
	f.Write(lines[1])
	f.WriteString(`{"type":"assistant","message":{"id":"msg_huge","role":"assistant","content":[{"type":"text","text":"`)
	f.Write(bytes.Repeat([]byte("x"), 20<<20))
	f.WriteString("\"}]}}\n")
	for _, l := range lines[2:] {
		f.Write(l)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	req, _ := replayRequest(t, "claude", f.Name())
	c := newCollector(t)
	res, err := Run(context.Background(), req, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped["line too long"] != 1 || res.Output != `{"files": ["a.txt", "b.txt"]}` && !strings.Contains(res.Output, "a.txt") {
		t.Errorf("result = %+v", res)
	}
	if fid := c.checkPairs(t); fid[transcript.FidelityAgentEmitted] != 1 {
		t.Errorf("tool calls = %v", fid)
	}
}

// A timeout kills the whole process group: the CLI and a child it started.
// The dangling tool use is closed with the reason.
func TestCLITimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	bin := script(t, fmt.Sprintf(`sleep 300 &
echo $! > %q
head -n 2 %q
sleep 300`, pidFile, cliTestdata(t, "claude-tool-json.jsonl")))
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	c := newCollector(t)
	start := time.Now()
	_, err := Run(ctx, Request{Provider: "claude", Prompt: "p", Options: map[string]any{"command": bin}, Dir: dir, Env: baseEnv()}, c.emit)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run returned after %s", d)
	}
	// The normalizer records the tool.call as soon as it sees the tool_use,
	// before the message holding it is complete.
	want := []transcript.EventType{transcript.MessageUser, transcript.ToolCall, transcript.MessageAssistant, transcript.ToolResult}
	if got := c.types(); !equalTypes(got, want) {
		t.Fatalf("events = %v", got)
	}
	if r := c.events[3].Tool(); r.Error != "no result: timeout" {
		t.Errorf("closing result = %+v", r)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	proctest.AssertDead(t, strings.TrimSpace(string(pid)))
}

// When the transcript cannot be written the provider is stopped at once.
func TestCLIRecordFailureStopsProvider(t *testing.T) {
	bin := script(t, `head -n 2 "`+cliTestdata(t, "claude-tool-json.jsonl")+`"; sleep 300`)
	c := newCollector(t)
	c.failAt = 2
	start := time.Now()
	_, err := Run(context.Background(), Request{Provider: "claude", Prompt: "p", Options: map[string]any{"command": bin}, Dir: t.TempDir(), Env: baseEnv()}, c.emit)
	if err == nil || !errors.Is(err, errDiskFull) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestCLIProviderReportedError(t *testing.T) {
	fixture := filepath.Join(testfixtures.Dir(t, "gemini-stream-json"), "gemini_stream_error.jsonl")
	req, _ := replayRequest(t, "gemini", fixture)
	c := newCollector(t)
	_, err := Run(context.Background(), req, c.emit)
	if err == nil || !strings.Contains(err.Error(), "agent gemini: provider reported an error: API key invalid or expired") {
		t.Fatalf("err = %v", err)
	}
}

// Lines reach the transcript while the provider is still running.
func TestCLIStreamsLive(t *testing.T) {
	req, _ := replayRequest(t, "claude", cliTestdata(t, "claude-tool-json.jsonl"))
	req.Env = append(req.Env, "REEL_FAKE_AGENT_DELAY=0.3")
	firstAssistant := make(chan time.Time, 4)
	c := newCollector(t)
	start := time.Now()
	res, err := Run(context.Background(), req, func(e transcript.ExchangeEvent) error {
		if e.Type == transcript.MessageAssistant {
			firstAssistant <- time.Now()
		}
		return c.emit(e)
	})
	if err != nil {
		t.Fatal(err)
	}
	first := <-firstAssistant
	if total := time.Duration(res.DurationMS) * time.Millisecond; first.Sub(start) > total-500*time.Millisecond {
		t.Errorf("first assistant message after %s of a %s step: not streamed", first.Sub(start), total)
	}
}

// options.command wins over the environment override.
func TestCLICommandOptionBeatsEnv(t *testing.T) {
	req, argsFile := replayRequest(t, "claude", cliTestdata(t, "claude-tool-json.jsonl"))
	req.Env = append(req.Env, "REEL_CLAUDE_BIN=/nonexistent/claude")
	if _, err := Run(context.Background(), req, newCollector(t).emit); err != nil {
		t.Fatal(err)
	}
	if readArgs(t, argsFile) == "" {
		t.Error("fake agent did not run")
	}
}

// A CLI that exits while a background child still holds its stdout: the
// step completes (after the wait delay) and the child does not outlive it.
func TestCLILeftoverChildIsKilled(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "bg.pid")
	bin := script(t, fmt.Sprintf(`sleep 300 &
echo $! > %q
cat %q`, pidFile, cliTestdata(t, "claude-tool-json.jsonl")))
	c := newCollector(t)
	res, err := Run(context.Background(), Request{Provider: "claude", Prompt: "p", Options: map[string]any{"command": bin}, Dir: dir, Env: baseEnv()}, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "a.txt") {
		t.Errorf("result = %+v", res)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	proctest.AssertDead(t, strings.TrimSpace(string(pid)))
}
