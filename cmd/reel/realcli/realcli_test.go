package realcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/modeltest"
	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/transcript"
)

// TestMain gives reel a data directory of its own: a run's index and
// defaults must never be the developer's.
func TestMain(m *testing.M) { proctest.Main(m) }

// transcriptLine is where reel run names the transcript it wrote.
var transcriptLine = regexp.MustCompile(`(?m)^transcript (\S+)$`)

// reelBinary builds reel once per test binary.
func reelBinary(t testing.TB) string {
	t.Helper()
	return proctest.Build(t, "github.com/reelhq/reel/cmd/reel")
}

// reelVerify fails the test unless reel verify accepts path.
func reelVerify(t testing.TB, env []string, path string) {
	t.Helper()
	cmd := exec.Command(reelBinary(t), "verify", path)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("reel verify %s: %v\n%s", path, err, out.String())
	}
}

// Each published agent CLI (installed by scripts/agent-clis.sh, found
// through $REEL_AGENT_CLIS) runs a reel workflow against the scripted
// model server: the model asks for a file write and a shell command, the
// CLI runs its own tools, and a follow-up message resumes the CLI's
// session. The test checks the files on disk, the transcript (prompt,
// system prompt, reply, one agent-emitted tool.call/tool.result pair per
// call the model asked for, usage, session id), reel verify, and what the
// CLI sent the model (model, system prompt, tool results, the first turn
// again in the resumed session). A CLI release that changes a flag or a
// stream shape fails here.
func TestRealCLI(t *testing.T) {
	for _, provider := range modeltest.CLIProviders {
		t.Run(provider, func(t *testing.T) {
			// The CLIs spend much of their time waiting (start-up,
			// their own timers): two at a time (-parallel defaults to
			// GOMAXPROCS) nearly halve the package's minutes.
			t.Parallel()
			testRealCLI(t, provider)
		})
	}
}

// realCLIExpect is what differs between the CLIs' reports.
var realCLIExpect = map[string]struct {
	// noUsage: the CLI reports no token counts for a BYOK model.
	noUsage bool
}{
	"github_copilot": {noUsage: true},
}

const (
	realCLISystem   = "SYSTEM-MARKER-7: answer in one short sentence."
	realCLIPrompt   = "Create hello.txt, then record that a shell ran."
	realCLIFollowUp = "FOLLOW-UP-9: what did you just do?"
)

func testRealCLI(t *testing.T, provider string) {
	s := modeltest.New(t)
	cli := s.CLI(t, provider)
	write := cli.WriteFile("hello.txt", "hello from the scripted model\n")
	shell := cli.Shell("echo shell-ran > shell.txt")
	s.Add(
		modeltest.Reply{ToolCalls: []modeltest.ToolCall{write}},
		modeltest.Reply{Text: "Now the shell.", ToolCalls: []modeltest.ToolCall{shell}},
		modeltest.Text("Wrote hello.txt and ran the shell."),
		modeltest.Text("I wrote a file and ran one command."),
	)

	opts := map[string]any{"command": cli.Path, "model": cli.Model}
	for k, v := range cli.Options {
		opts[k] = v
	}
	keep := os.Getenv("REEL_REALCLI_KEEP")
	if keep != "" {
		// For a person recording the CLIs' streams after a release: a
		// wrapper keeps each turn's stdout (see internal/normalize's
		// testdata/golden/README.md).
		wrapper := filepath.Join(t.TempDir(), "tee-cli")
		writeFile(t, wrapper, "#!/bin/bash\nset -o pipefail\nn=$(ls "+keep+"/"+provider+".turn*.stdout 2>/dev/null | wc -l)\n"+
			"exec \""+cli.Path+"\" \"$@\" | tee \""+keep+"/"+provider+".turn$((n+1)).stdout\"\n", 0o755)
		opts["command"] = wrapper
	}
	extra := "    system_prompt: \"" + realCLISystem + "\"\n    conversation:\n      - \"" + realCLIFollowUp + "\"\n"
	dir, out, err, path, events := runRealCLIStep(t, provider, opts, cli.Env, extra)
	if err != nil {
		t.Fatalf("reel run: %v\n%s\nrequests: %s", err, out, describeRequests(s))
	}
	s.CheckDone(t)

	// The CLI's own tools changed the files.
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello from the scripted model\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "shell.txt")); err != nil || strings.TrimSpace(string(b)) != "shell-ran" {
		t.Errorf("shell.txt: %q, %v", b, err)
	}
	if keep != "" {
		b, _ := os.ReadFile(path)
		os.WriteFile(filepath.Join(keep, provider+".transcript.jsonl"), b, 0o644)
	}
	result := checkRealCLITranscript(t, provider, events, s.ToolCallsAsked())
	// Every model call counted once: a resumed session's running totals
	// (codex; claude from 2.1.332) are not added up again.
	if served := s.ServedUsage(); !realCLIExpect[provider].noUsage &&
		(result.Usage.InputTokens != int64(served.InputTokens) || result.Usage.OutputTokens != int64(served.OutputTokens)) {
		t.Errorf("step usage %+v, the server reported %+v over %d requests", result.Usage, served, s.Served())
	}

	// What the CLI sent the model.
	turns := s.Turns()
	if len(turns) != 4 {
		t.Fatalf("%d conversation requests, want 4: %s", len(turns), describeRequests(s))
	}
	for i, r := range turns {
		if r.Model != cli.WireModel {
			t.Errorf("request %d: model %q, want %q", i, r.Model, cli.WireModel)
		}
		if !strings.Contains(r.System+strings.Join(r.UserTexts(), "\n"), realCLISystem) {
			t.Errorf("request %d carries no system prompt", i)
		}
	}
	if !strings.Contains(turns[0].LastUserText(), realCLIPrompt) {
		t.Errorf("first request's user text %q lacks the prompt", turns[0].LastUserText())
	}
	// (The server itself fails the test when a request lacks the result
	// of a call the previous reply asked for.)
	// The follow-up continued the session: the CLI sent the first turn's
	// prompt and tool results again, then the new message.
	last := turns[3]
	if !strings.Contains(last.LastUserText(), realCLIFollowUp) {
		t.Errorf("follow-up request's user text %q", last.LastUserText())
	}
	if !strings.Contains(strings.Join(last.UserTexts(), "\n"), realCLIPrompt) || len(last.ToolResults()) < 2 {
		t.Errorf("follow-up request does not carry the first turn (session not resumed): %d tool results, user texts %q",
			len(last.ToolResults()), last.UserTexts())
	}
}

// checkRealCLITranscript checks the agent step's events: the prompt and
// system prompt as reel sent them, the replies, one agent-emitted
// tool.call/tool.result pair per call the model asked for, and the step's
// usage and session.
func checkRealCLITranscript(t *testing.T, provider string, events []transcript.ExchangeEvent, asked int) *transcript.AgentResult {
	t.Helper()
	var users, replies []string
	calls := map[string]string{}
	var results, callCount int
	var result *transcript.AgentResult
	for _, e := range events {
		switch e.Type {
		case transcript.MessageUser:
			users = append(users, e.Message().Blocks[0].Text)
			if len(users) == 1 && (len(e.Message().Blocks) < 2 || e.Message().Blocks[1].Text != realCLISystem) {
				t.Errorf("first message.user has no system prompt block: %+v", e.Message().Blocks)
			}
		case transcript.MessageAssistant:
			for _, b := range e.Message().Blocks {
				if b.Type == transcript.BlockText {
					replies = append(replies, b.Text)
				}
			}
		case transcript.ToolCall:
			p := e.Tool()
			callCount++
			calls[p.CallID] = p.Name
			if p.Fidelity != transcript.FidelityAgentEmitted || p.CallID == "" || p.Name == "" {
				t.Errorf("tool.call %+v", p)
			}
		case transcript.ToolResult:
			p := e.Tool()
			results++
			if _, ok := calls[p.CallID]; !ok {
				t.Errorf("tool.result %s pairs with no tool.call", p.CallID)
			}
			if p.Fidelity != transcript.FidelityAgentEmitted || p.Error != "" {
				t.Errorf("tool.result %+v", p)
			}
		case transcript.StepCompleted:
			if e.Path != "agent" {
				continue
			}
			raw, _ := json.Marshal(e.Step().Result)
			result = &transcript.AgentResult{}
			if err := json.Unmarshal(raw, result); err != nil {
				t.Fatalf("step result: %v", err)
			}
			if e.Step().Error != "" {
				t.Errorf("step error: %s", e.Step().Error)
			}
		}
	}
	if strings.Join(users, "|") != realCLIPrompt+"|"+realCLIFollowUp {
		t.Errorf("message.user texts %q", users)
	}
	joined := strings.Join(replies, "|")
	for _, want := range []string{"Wrote hello.txt and ran the shell.", "I wrote a file and ran one command."} {
		if !strings.Contains(joined, want) {
			t.Errorf("replies %q lack %q", replies, want)
		}
	}
	if callCount != asked || results != asked {
		t.Errorf("%d tool.call and %d tool.result events for %d calls the model asked for (%v)", callCount, results, asked, calls)
	}
	if result == nil {
		t.Fatal("no step.completed for the agent step")
	}
	if result.Output != "I wrote a file and ran one command." || result.SessionID == "" || result.Provider != provider || result.UserTurns != 2 {
		t.Errorf("step result: %+v", result)
	}
	if !realCLIExpect[provider].noUsage && (result.Usage.InputTokens == 0 || result.Usage.OutputTokens == 0) {
		t.Errorf("step usage: %+v", result.Usage)
	}
	return result
}

func writeFile(t testing.TB, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// describeRequests lists what the server got, for failure messages.
func describeRequests(s *modeltest.Server) string {
	var b strings.Builder
	for i, r := range s.Requests() {
		fmt.Fprintf(&b, "\n  #%d %s %s %s model %q turn %d, last user text %.80q", i, r.Method, r.Path, r.API, r.Model, r.Turn, r.LastUserText())
	}
	return b.String()
}

// runRealCLIStep runs a one-state workflow whose agent step uses provider
// with opts (and the state fields in extra, YAML indented by four), in a
// fresh directory with env. It returns the directory, reel's combined
// output and error, and the transcript, which reel verify must accept.
//
//lint:ignore ST1008 runErr is the outcome of reel under test, not this helper's failure
func runRealCLIStep(t *testing.T, provider string, opts map[string]any, env []string, extra string) (dir, out string, runErr error, path string, events []transcript.ExchangeEvent) {
	t.Helper()
	dir = t.TempDir()
	optsJSON, _ := json.Marshal(opts)
	writeFile(t, filepath.Join(dir, "wf.yaml"), "name: one\nstates:\n  initial: agent\n  agent:\n    type: agent\n    provider: "+provider+
		"\n    prompt: \""+realCLIPrompt+"\"\n    options: "+string(optsJSON)+"\n"+extra, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, reelBinary(t), "run", "wf.yaml", "--storage", filepath.Join(dir, "store"))
	cmd.Dir = dir
	cmd.Env = append(env, "REEL_STORAGE=", "XDG_DATA_HOME="+os.Getenv("XDG_DATA_HOME"))
	b, runErr := cmd.CombinedOutput()
	out = string(b)
	m := transcriptLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no transcript path in:\n%s", out)
	}
	events, err := transcript.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	reelVerify(t, cmd.Env, m[1])
	return dir, out, runErr, m[1], events
}

// gemini refuses, in headless mode, a folder the user has not trusted
// (exit 55): the step fails with gemini's own explanation of the fix, and
// the transcript still verifies.
func TestRealCLIGeminiUntrustedFolder(t *testing.T) {
	t.Parallel()
	s := modeltest.New(t)
	cli := s.CLI(t, "gemini")
	var env []string
	for _, kv := range cli.Env {
		if !strings.HasPrefix(kv, "GEMINI_CLI_TRUST_WORKSPACE=") {
			env = append(env, kv)
		}
	}
	opts := map[string]any{"command": cli.Path, "model": cli.Model}
	_, out, err, _, events := runRealCLIStep(t, "gemini", opts, env, "")
	if err == nil || !strings.Contains(out, "trusted directory") || !strings.Contains(out, "--skip-trust") {
		t.Fatalf("want a failed step naming the trust fix; err %v, output:\n%s", err, out)
	}
	var stepErr string
	for _, e := range events {
		if e.Type == transcript.StepCompleted && e.Path == "agent" {
			stepErr = e.Step().Error
		}
	}
	if !strings.Contains(stepErr, "status 55") || !strings.Contains(stepErr, "GEMINI_CLI_TRUST_WORKSPACE") {
		t.Errorf("step error %q", stepErr)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("gemini reached the model server %d times", n)
	}
	s.CheckDone(t)
}

// reel's own HTTP provider against the same scripted server: the model's
// Write and Bash calls go through reel's tool router, each recorded once
// with router fidelity, and the tool results go back to the model.
func TestModelServerDrivesOpenAICompatible(t *testing.T) {
	s := modeltest.New(t,
		modeltest.Call("Write", map[string]any{"file_path": "hello.txt", "content": "from the router\n"}),
		modeltest.Call("Bash", map[string]any{"command": "echo shell-ran > shell.txt"}),
		modeltest.Text("Done."),
	)
	opts := map[string]any{"base_url": s.URL + "/v1", "model": "scripted-model", "tools": []string{"Write", "Bash"}}
	dir, out, err, _, events := runRealCLIStep(t, "openai_compatible", opts, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, "")
	if err != nil {
		t.Fatalf("reel run: %v\n%s", err, out)
	}
	s.CheckDone(t)
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "from the router\n" {
		t.Errorf("hello.txt: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "shell.txt")); err != nil || strings.TrimSpace(string(b)) != "shell-ran" {
		t.Errorf("shell.txt: %q, %v", b, err)
	}
	calls, results := 0, 0
	for _, e := range events {
		switch e.Type {
		case transcript.ToolCall:
			calls++
			if e.Tool().Fidelity != transcript.FidelityRouter {
				t.Errorf("tool.call %+v", e.Tool())
			}
		case transcript.ToolResult:
			results++
			if e.Tool().Fidelity != transcript.FidelityRouter || e.Tool().Error != "" {
				t.Errorf("tool.result %+v", e.Tool())
			}
		}
	}
	if calls != s.ToolCallsAsked() || results != calls {
		t.Errorf("%d calls, %d results for %d asked", calls, results, s.ToolCallsAsked())
	}
	turns := s.Turns()
	if turns[0].Model != "scripted-model" || turns[0].LastUserText() != realCLIPrompt || !turns[0].HasTool("Write") || !turns[0].HasTool("Bash") {
		t.Errorf("first request: model %q, user %q, tools %v", turns[0].Model, turns[0].LastUserText(), turns[0].Tools)
	}
	if r := turns[2].ToolResults(); len(r) != 2 {
		t.Errorf("last request carries %d tool results", len(r))
	}
}

// The model answers the CLI's first request with an API error the CLI
// does not retry (Claude Code retries a 400, codex a 403): the real CLI gives up, reel fails the step with
// the API's message, and the transcript of the failed run verifies.
func TestRealCLIModelError(t *testing.T) {
	const msg = "scripted-refusal-42: this key may not use the model"
	for _, c := range []struct {
		provider string
		status   int
	}{{"claude", http.StatusForbidden}, {"codex", http.StatusBadRequest}, {"gemini", http.StatusBadRequest}} {
		provider := c.provider
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			s := modeltest.New(t, modeltest.Fail(c.status, msg))
			cli := s.CLI(t, provider)
			opts := map[string]any{"command": cli.Path, "model": cli.Model}
			for k, v := range cli.Options {
				opts[k] = v
			}
			_, out, err, _, events := runRealCLIStep(t, provider, opts, cli.Env, "")
			if err == nil {
				t.Fatalf("reel run succeeded:\n%s\nrequests: %s", out, describeRequests(s))
			}
			s.CheckDone(t)
			var stepErr string
			for _, e := range events {
				if e.Type == transcript.StepCompleted && e.Path == "agent" {
					stepErr = e.Step().Error
				}
			}
			if !strings.Contains(stepErr, "scripted-refusal-42") {
				t.Errorf("step error %q lacks the API's message\noutput:\n%s", stepErr, out)
			}
		})
	}
}
