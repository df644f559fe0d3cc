package mcpproxy_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/modeltest"
	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/plugin/plugintest"
	"github.com/reelhq/reel/internal/query"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
)

// These tests drive the published agent CLIs (scripts/agent-clis.sh,
// $REEL_AGENT_CLIS) through reel's engine, as reel run does, against the
// scripted model server. They live here, beside the proxy, rather than
// with cmd/reel's other real-CLI tests, so that each package's tests stay
// within go test's time limit.

// runResult is what a run left: its exit code, its display and why it
// failed.
type runResult struct {
	code           int
	stdout, stderr string
}

// runWorkflow runs the workflow at path in dir with env (the CLI's),
// recording into storage, with the plugins of host (nil: none), as reel
// run does, and fails the test unless the run succeeds (saying which
// tools the CLI offered srv's model).
func runWorkflow(t *testing.T, srv *modeltest.Server, dir string, env []string, path, storage string, host *plugin.Host) runResult {
	t.Helper()
	var display bytes.Buffer
	e := &engine.Engine{Storage: storage, Dir: dir, Environ: env, Display: &display, PluginHost: host}
	wf, err := workflow.Load(path, e.LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.Run(context.Background(), wf, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := runResult{code: rep.ExitCode, stdout: display.String(), stderr: rep.Error}
	if res.code != 0 {
		var offered []string
		if turns := srv.Turns(); len(turns) > 0 {
			offered = turns[0].Tools
		}
		t.Fatalf("reel run exited %d:\n%s%s\ntools offered: %v", res.code, res.stdout, res.stderr, offered)
	}
	return res
}

// verifyStorage fails the test unless reel verify accepts every
// transcript in storage.
func verifyStorage(t *testing.T, storage string) {
	t.Helper()
	rep := verify.Paths([]string{storage}, verify.Options{})
	if rep.Violations() > 0 || len(rep.Unreadable) > 0 || len(rep.Files) == 0 {
		t.Fatalf("verify %s: files %d, problems %v, unreadable %v", storage, len(rep.Files), rep.Problems, rep.Unreadable)
	}
}

// proxiedName is the name under which provider's CLI offers the model a
// tool of reel's MCP server.
var proxiedName = map[string]func(tool string) string{
	"claude":         func(t string) string { return "mcp__reel__" + t },
	"codex":          func(t string) string { return "mcp__reel__" + t },
	"gemini":         func(t string) string { return "mcp_reel_" + t },
	"opencode":       func(t string) string { return "reel_" + t },
	"github_copilot": func(t string) string { return "reel-" + t },
}

// proxyWorkflow writes a workflow whose one agent step runs cli through
// the proxy (mcp_proxy) and returns its path. extra are lines after the
// block's enable: more of the block indented by six, more of the step by
// four.
func proxyWorkflow(t *testing.T, dir string, cli *modeltest.CLI, extra string) string {
	t.Helper()
	opts := map[string]any{"model": cli.Model, "command": cli.Path}
	if cli.Provider == "codex" {
		// codex offers the model an MCP server's tools behind tool_search
		// when the model supports it (gpt-5 and later), which the scripted
		// server does not speak; with an older model it offers them
		// directly, as namespace mcp__reel.
		opts["model"] = "gpt-4.1"
	}
	// The CLI's own permission options stay (claude's allowed_tools
	// beside the proxy's --allowedTools mcp__reel, as a step moved to
	// the proxy would keep them).
	for k, v := range cli.Options {
		opts[k] = v
	}
	ob, _ := json.Marshal(opts)
	wf := fmt.Sprintf(`name: proxied
states:
  initial: edit
  edit:
    type: agent
    provider: %s
    prompt: Write notes.txt, append a line with a command, then read it back.
    options: %s
    mcp_proxy:
      enable: true
%s    on_success: done
  done:
    type: terminal
`, cli.Provider, ob, extra)
	p := filepath.Join(dir, "proxied.yaml")
	if err := os.WriteFile(p, []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A workflow with mcp_proxy runs each real CLI: the files its tools touch
// change on disk, every call is a router pair under the agent's own tool
// id, the count of tool.call events is the count of calls the model
// asked for, nothing is counted twice, and reel verify accepts the
// transcript.
func TestMCPProxyRealCLIs(t *testing.T) {
	for _, provider := range []string{"claude", "codex", "gemini", "opencode", "github_copilot"} {
		t.Run(provider, func(t *testing.T) {
			// Each CLI waits mostly on its own start: they overlap well.
			t.Parallel()
			name := proxiedName[provider]
			srv := modeltest.New(t,
				modeltest.Call(name("Write"), map[string]any{"file_path": "notes.txt", "content": "one\n"}),
				modeltest.Call(name("Bash"), map[string]any{"command": "echo two >> notes.txt && wc -l < notes.txt"}),
				modeltest.Reply{ToolCalls: []modeltest.ToolCall{
					{Name: name("Read"), Input: map[string]any{"file_path": "notes.txt"}},
					{Name: name("Grep"), Input: map[string]any{"pattern": "tw"}},
				}},
				modeltest.Text("notes.txt holds two lines."),
			)
			cli := srv.CLI(t, provider)
			work := t.TempDir()
			storage := filepath.Join(t.TempDir(), "storage")
			wf := proxyWorkflow(t, work, cli, "")
			res := runWorkflow(t, srv, work, cli.Env, wf, storage, nil)
			srv.CheckDone(t)
			events := runEvents(t, storage)
			if b, _ := os.ReadFile(filepath.Join(work, "notes.txt")); string(b) != "one\ntwo\n" {
				var offered []string
				var results []modeltest.ToolResult
				for _, r := range srv.Turns() {
					offered = r.Tools
					results = r.ToolResults()
				}
				t.Fatalf("notes.txt = %q; tool events:\n%s\ntools offered: %v\nresults: %+v\nreel run:\n%s%s", b, dumpTools(events), offered, results, res.stdout, res.stderr)
			}
			first := srv.Turns()[0]
			for _, tool := range []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep"} {
				if !first.HasTool(name(tool)) {
					t.Errorf("%s not offered (tools: %v)", name(tool), first.Tools)
				}
			}
			// claude and gemini can turn their own tools off: through the
			// proxy their model sees reel's tools only.
			for _, native := range map[string][]string{"claude": {"Write", "Bash", "Read"}, "gemini": {"write_file", "run_shell_command", "read_file"}}[provider] {
				if first.HasTool(native) {
					t.Errorf("%s still offers its own %s: %v", provider, native, first.Tools)
				}
			}
			checkProxied(t, events, srv.ToolCallsAsked(), provider)
			verifyStorage(t, storage)
			// What reel tools --fidelity lists.
			files, _ := filepath.Glob(filepath.Join(transcript.Dir(storage), "*.jsonl"))
			pairs, warnings, err := query.Tools(runs.Open(files[0], runs.Options{}))
			if err != nil || len(warnings) > 0 {
				t.Fatalf("tools: %v %v", err, warnings)
			}
			if n := len(query.WithFidelity(pairs, transcript.FidelityRouter)); n != srv.ToolCallsAsked() || len(pairs) != n {
				t.Errorf("tools: %d pairs, %d of router fidelity; want %d, all", len(pairs), n, srv.ToolCallsAsked())
			}
		})
	}
}

// runEvents reads the transcript of the one run in storage.
func runEvents(t *testing.T, storage string) []transcript.ExchangeEvent {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts in %s: %v", storage, files)
	}
	events, err := transcript.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// dumpTools renders the tool events of a run, for failure messages.
func dumpTools(events []transcript.ExchangeEvent) string {
	var b strings.Builder
	for _, ev := range events {
		if p := ev.Tool(); p != nil {
			in, _ := json.Marshal(p.Input)
			out, _ := json.Marshal(p.Output)
			fmt.Fprintf(&b, "%s %s %s %s in=%.200s out=%.200s err=%q\n", ev.Type, p.Fidelity, p.Name, p.CallID, in, out, p.Error)
		}
	}
	return b.String()
}

// checkProxied checks what a proxied step recorded: asked tool.call
// events, each a router pair under the id of a tool_use block of the
// agent's messages, one block per pair, and the step's result naming the
// proxy.
func checkProxied(t *testing.T, events []transcript.ExchangeEvent, asked int, provider string) {
	t.Helper()
	calls, results := map[string]*transcript.ToolPayload{}, map[string]*transcript.ToolPayload{}
	uses := map[string]string{}
	var proxy *transcript.ToolProxy
	for _, ev := range events {
		switch ev.Type {
		case transcript.ToolCall, transcript.ToolResult:
			p := ev.Tool()
			if p.Fidelity != transcript.FidelityRouter {
				t.Errorf("%s %s %s has fidelity %s", ev.Type, p.Name, p.CallID, p.Fidelity)
			}
			if ev.Path != "edit" {
				t.Errorf("%s at path %q", ev.Type, ev.Path)
			}
			m := calls
			if ev.Type == transcript.ToolResult {
				m = results
			}
			if _, dup := m[p.CallID]; dup {
				t.Errorf("%s %s twice", ev.Type, p.CallID)
			}
			m[p.CallID] = p
		case transcript.MessageAssistant:
			for _, b := range ev.Message().Blocks {
				if b.Type == transcript.BlockToolUse {
					uses[b.ToolID] = b.ToolName
				}
			}
		case transcript.StepCompleted:
			var res transcript.AgentResult
			if raw, ok := ev.Step().Result.(json.RawMessage); ok && ev.Path == "edit" && json.Unmarshal(raw, &res) == nil {
				proxy = res.Proxy
			}
		}
	}
	if len(calls) != asked || len(results) != asked {
		t.Errorf("%d tool.call and %d tool.result events, the model asked for %d calls", len(calls), len(results), asked)
	}
	for id, p := range calls {
		if results[id] == nil {
			t.Errorf("call %s has no result", id)
		}
		if uses[id] == "" {
			t.Errorf("router pair %s (%s) names no tool_use block of the agent (blocks: %v)", id, p.Name, uses)
		}
		if p.Input == nil {
			t.Errorf("call %s without input", id)
		}
	}
	if proxy == nil || proxy.Server != "reel" || len(proxy.Tools) == 0 {
		t.Errorf("step result proxy = %+v", proxy)
	}
	for id, name := range uses {
		if calls[id] == nil {
			t.Errorf("tool_use %s (%s) has no pair", id, name)
		}
		if proxy != nil && proxy.Tools[name] == "" {
			t.Errorf("tool_use %s is %s, not a proxied tool name of %s", id, name, provider)
		}
	}
}

// A hostile agent through the proxy, played by the real claude: a path
// out of the working directory, a symlink out, a FIFO, a 1 GB file and a
// Bash that never ends are each refused or bounded by reel's router,
// answered to the agent with the error and recorded with it, and the run
// goes on to its end.
func TestMCPProxyHostileAgent(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("s3cr3t"), 0o600)
	work := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(work, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(work, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(work, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	big.WriteString(strings.Repeat("a line of text\n", 1000))
	if err := big.Truncate(1 << 30); err != nil { // 1 GB, the rest sparse
		t.Fatal(err)
	}
	big.Close()
	if err := os.WriteFile(filepath.Join(work, "huge.txt"), []byte(strings.Repeat("a line of text\n", 200000)), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		tool    string
		input   map[string]any
		wantErr string
	}{
		{"Read", map[string]any{"file_path": "../" + filepath.Base(outside) + "/secret"}, "outside the working directory"},
		{"Write", map[string]any{"file_path": secret, "content": "pwned"}, "outside the working directory"},
		{"Read", map[string]any{"file_path": "link"}, "outside the working directory"},
		{"Read", map[string]any{"file_path": "fifo"}, "not a regular file"},
		{"Read", map[string]any{"file_path": "big.txt"}, "binary file (1073741824 bytes)"},
		{"Read", map[string]any{"file_path": "huge.txt"}, ""}, // bounded: its first 256 KiB
		{"Bash", map[string]any{"command": "sleep 600"}, "Bash: timed out after 2s"},
	}
	var script []modeltest.Reply
	for _, c := range calls {
		script = append(script, modeltest.Call("mcp__reel__"+c.tool, c.input))
	}
	srv := modeltest.New(t, append(script, modeltest.Text("Nothing worked."))...)
	cli := srv.CLI(t, "claude")
	storage := filepath.Join(t.TempDir(), "storage")
	wf := proxyWorkflow(t, work, cli, "")
	b, _ := os.ReadFile(wf)
	os.WriteFile(wf, []byte(strings.Replace(string(b), `"model":`, `"bash_timeout":2,"model":`, 1)), 0o644)
	start := time.Now()
	runWorkflow(t, srv, work, cli.Env, wf, storage, nil)
	if d := time.Since(start); d > 3*time.Minute {
		t.Fatalf("the run took %s", d)
	}
	srv.CheckDone(t)
	if b, _ := os.ReadFile(secret); string(b) != "s3cr3t" {
		t.Fatalf("the file outside was changed: %q", b)
	}
	events := runEvents(t, storage)
	checkProxied(t, events, len(calls), "claude")
	var results []*transcript.ToolPayload
	for _, ev := range events {
		if ev.Type == transcript.ToolResult {
			results = append(results, ev.Tool())
		}
	}
	if len(results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(results), len(calls))
	}
	for i, c := range calls {
		r := results[i]
		if c.wantErr == "" {
			out, _ := json.Marshal(r.Output)
			if r.Error != "" || len(out) > 300<<10 || !strings.Contains(string(out), "[truncated: file is 3000000 bytes, only the first 262144 were read]") {
				t.Errorf("%s %v: recorded error %q and %d bytes of output, want the first 256 KiB", c.tool, c.input, r.Error, len(out))
			}
			continue
		}
		if !strings.Contains(r.Error, c.wantErr) {
			t.Errorf("%s %v: recorded error %q, want %q", c.tool, c.input, r.Error, c.wantErr)
		}
		// What the agent got back is the router's answer, error and
		// all.
		got := srv.Turns()[i+1].ToolResults()
		if len(got) == 0 || !got[len(got)-1].IsError || !strings.Contains(got[len(got)-1].Output, c.wantErr) {
			t.Errorf("%s: the agent got %.300v", c.tool, got)
		}
	}
	verifyStorage(t, storage)
}

// A conversation step through the proxy: each turn's CLI process gets an
// endpoint of its own, the session resumes across turns, and the calls of
// every turn are router pairs of the one step.
func TestMCPProxyConversation(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t,
		modeltest.Call("mcp__reel__Write", map[string]any{"file_path": "a.txt", "content": "first\n"}),
		modeltest.Text("Wrote a.txt."),
		modeltest.Call("mcp__reel__Edit", map[string]any{"file_path": "a.txt", "old_string": "first", "new_string": "second"}),
		modeltest.Text("Edited it."),
	)
	cli := srv.CLI(t, "claude")
	work := t.TempDir()
	storage := filepath.Join(t.TempDir(), "storage")
	wf := proxyWorkflow(t, work, cli, "    conversation:\n      - Now change first to second.\n")
	runWorkflow(t, srv, work, cli.Env, wf, storage, nil)
	srv.CheckDone(t)
	if b, _ := os.ReadFile(filepath.Join(work, "a.txt")); string(b) != "second\n" {
		t.Fatalf("a.txt = %q", b)
	}
	turns := srv.Turns()
	if last := turns[len(turns)-1]; len(last.UserTexts()) < 2 {
		t.Errorf("the second turn did not resume the session: user messages %q", last.UserTexts())
	}
	checkProxied(t, runEvents(t, storage), 2, "claude")
	verifyStorage(t, storage)
}

// plugin_tools through the real CLIs: the model calls the operations of
// real plugin processes (reel's test plugins, speaking AWF's protocol)
// by their proxied names beside a builtin; the database the plugin
// writes changes on disk, and each call is one router pair under the
// agent's id. claude runs with its own tools off, codex with
// intercept_builtins false (the proxy serves the plugin tools alone).
func TestMCPProxyPluginToolsRealCLIs(t *testing.T) {
	for _, c := range []struct {
		provider  string
		intercept bool
	}{{"claude", true}, {"codex", false}} {
		t.Run(c.provider, func(t *testing.T) {
			t.Parallel()
			name := proxiedName[c.provider]
			replies := []modeltest.Reply{
				modeltest.Call(name("echo_echo"), map[string]any{"text": "hi", "repeat": 2}),
				modeltest.Call(name("db_exec"), map[string]any{"sql": "CREATE TABLE notes (v TEXT)"}),
				modeltest.Call(name("db_exec"), map[string]any{"sql": "INSERT INTO notes VALUES (?), (?)", "args": []any{"one", "two"}}),
				modeltest.Call(name("db_query"), map[string]any{"sql": "SELECT count(*) AS n FROM notes"}),
			}
			if c.intercept {
				replies = append(replies, modeltest.Call(name("Write"), map[string]any{"file_path": "done.txt", "content": "2 notes\n"}))
			}
			srv := modeltest.New(t, append(replies, modeltest.Text("Two notes stored."))...)
			cli := srv.CLI(t, c.provider)
			work := t.TempDir()
			host := plugintest.Open(t, plugin.Options{Config: map[string]map[string]any{"db": {"database": filepath.Join(work, "app.db")}}}, "echo", "db")
			storage := filepath.Join(t.TempDir(), "storage")
			wf := proxyWorkflow(t, work, cli, fmt.Sprintf("      intercept_builtins: %v\n      plugin_tools:\n        - plugin: echo\n          expose: [echo]\n        - plugin: db\n          expose: [exec, query]\n", c.intercept))
			runWorkflow(t, srv, work, cli.Env, wf, storage, host)
			srv.CheckDone(t)
			first := srv.Turns()[0]
			for _, tool := range []string{"echo_echo", "db_exec", "db_query"} {
				if !first.HasTool(name(tool)) {
					t.Errorf("%s not offered (tools: %v)", name(tool), first.Tools)
				}
			}
			if first.HasTool(name("Read")) != c.intercept {
				t.Errorf("intercept_builtins %v, the builtins offered: %v", c.intercept, first.Tools)
			}
			events := runEvents(t, storage)
			results := map[string]string{}
			for _, ev := range events {
				if ev.Type == transcript.ToolResult {
					p := ev.Tool()
					out, _ := json.Marshal(p.Output)
					results[p.Name] += string(out) + p.Error
				}
			}
			if !strings.Contains(results["echo_echo"], `"output":"hihi"`) || !strings.Contains(results["db_query"], `"n":2`) {
				t.Errorf("recorded results %v\n%s", results, dumpTools(events))
			}
			db, err := sql.Open("sqlite", filepath.Join(work, "app.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var n int
			if err := db.QueryRow("SELECT count(*) FROM notes").Scan(&n); err != nil || n != 2 {
				t.Errorf("notes in app.db: %d %v", n, err)
			}
			if c.intercept {
				if b, _ := os.ReadFile(filepath.Join(work, "done.txt")); string(b) != "2 notes\n" {
					t.Errorf("done.txt = %q", b)
				}
			}
			checkProxied(t, events, srv.ToolCallsAsked(), c.provider)
			verifyStorage(t, storage)
		})
	}
}
