package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelhq/reel/internal/mcpserver"
	"github.com/reelhq/reel/internal/plugin/plugintest"
	"github.com/reelhq/reel/transcript"
)

// InspectorEnv names the variable holding the npm prefix the MCP
// Inspector is installed under; .ci/run installs it there with
// scripts/mcp-inspector.sh.
const inspectorEnv = "REEL_MCP_INSPECTOR"

// inspector runs the official MCP Inspector's CLI mode against reel
// mcp-serve (a fresh process per call, as the inspector starts its
// server) and returns what it printed.
func inspector(t *testing.T, work, storage string, args ...string) (map[string]any, string) {
	t.Helper()
	prefix := os.Getenv(inspectorEnv)
	if prefix == "" {
		t.Skipf("%s is unset: the MCP Inspector is not installed (.ci/run installs it with scripts/mcp-inspector.sh)", inspectorEnv)
	}
	bin := filepath.Join(prefix, "node_modules", ".bin", "mcp-inspector")
	argv := append([]string{"--cli", reelBinary(t), "mcp-serve", "--dir", work, "--record", "--storage", storage}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Dir = work
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp-inspector %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("mcp-inspector %s printed no JSON: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return doc, out.String()
}

// The official MCP Inspector's CLI mode lists reel mcp-serve's tools with
// their schemas and calls each; every call is recorded as a router pair
// of a run reel verify accepts.
func TestMCPInspector(t *testing.T) {
	work, storage := t.TempDir(), t.TempDir()
	list, _ := inspector(t, work, storage, "--method", "tools/list")
	tools, _ := list["tools"].([]any)
	want := map[string][]string{
		"Read": {"file_path"}, "Write": {"file_path", "content"}, "Edit": {"file_path", "old_string", "new_string"},
		"Bash": {"command"}, "Glob": {"pattern"}, "Grep": {"pattern"},
	}
	if len(tools) != len(want) {
		t.Fatalf("tools/list: %v", list)
	}
	for _, tl := range tools {
		m := tl.(map[string]any)
		name, _ := m["name"].(string)
		schema, _ := m["inputSchema"].(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		req, _ := json.Marshal(schema["required"])
		wreq, _ := json.Marshal(want[name])
		if schema["type"] != "object" || len(props) == 0 || string(req) != string(wreq) || m["description"] == "" {
			t.Errorf("tool %s: schema %v", name, schema)
		}
	}

	// Each call works on files of its own, so the inspector runs (a node
	// process each, slow to start) overlap.
	writeFile(t, filepath.Join(work, "edit.txt"), "alpha\nbeta\n", 0o644)
	writeFile(t, filepath.Join(work, "read.txt"), "one\ntwo\n", 0o644)
	calls := []struct {
		tool string
		args []string
		want string
	}{
		{"Write", []string{"file_path=notes.txt", "content=alpha\nbeta\n"}, "wrote 11 bytes to notes.txt"},
		{"Edit", []string{"file_path=edit.txt", "old_string=alpha", "new_string=ALPHA"}, "replaced 1 occurrence(s) in edit.txt"},
		{"Read", []string{"file_path=read.txt"}, "one\ntwo\n"},
		{"Glob", []string{"pattern=r*.txt"}, "read.txt"},
		{"Grep", []string{"pattern=tw", "path=read.txt"}, "read.txt:2:two"},
		{"Bash", []string{"command=wc -l < read.txt"}, `"output":"2\n"`},
		// A call the router refuses answers as a tool error, not a
		// protocol one.
		{"Read", []string{"file_path=../outside"}, "outside the working directory"},
	}
	t.Run("calls", func(t *testing.T) {
		for _, c := range calls {
			t.Run(c.tool, func(t *testing.T) {
				t.Parallel()
				argv := []string{"--method", "tools/call", "--tool-name", c.tool}
				for _, a := range c.args {
					argv = append(argv, "--tool-arg", a)
				}
				res, out := inspector(t, work, storage, argv...)
				refused := strings.Contains(c.want, "outside")
				if (res["isError"] == true) != refused || !strings.Contains(contentText(res), c.want) {
					t.Errorf("%s: %s", c.tool, out)
				}
			})
		}
	})
	for name, want := range map[string]string{"notes.txt": "alpha\nbeta\n", "edit.txt": "ALPHA\nbeta\n"} {
		if b, _ := os.ReadFile(filepath.Join(work, name)); string(b) != want {
			t.Fatalf("%s = %q", name, b)
		}
	}

	verifyStorage(t, storage)
	files, _ := filepath.Glob(filepath.Join(transcript.Dir(storage), "*.jsonl"))
	if len(files) != 1+len(calls) {
		t.Fatalf("%d recorded sessions, want %d", len(files), 1+len(calls))
	}
	recorded, router := toolEvents(t, files...)
	if recorded != len(calls) || router != recorded {
		t.Errorf("recorded %d tool calls (%d router), want %d", recorded, router, len(calls))
	}
	for _, f := range files {
		events, err := transcript.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var res transcript.AgentResult
		for _, ev := range events {
			if ev.Type == transcript.StepCompleted {
				if err := transcript.DecodeResult(ev.Step().Result, &res); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !strings.Contains(res.Provider, "inspector") {
			t.Errorf("%s: the session's client is %q", f, res.Provider)
		}
	}
}

// The inspector lists a plugin operation served by --plugin-tool with
// its schema, and calls it (reel's test plugin echo, a real process).
func TestMCPInspectorPluginTools(t *testing.T) {
	work, storage := t.TempDir(), t.TempDir()
	plugins := filepath.Join(work, ".awf", "plugins")
	plugintest.Install(t, plugins, "echo")
	t.Cleanup(func() { plugintest.NoneLeft(t, plugins) })
	t.Setenv("AWF_PLUGINS_PATH", plugins)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	list, out := inspector(t, work, storage, "--plugin-tool", "echo.echo", "--method", "tools/list")
	var echo map[string]any
	tools, _ := list["tools"].([]any)
	for _, tl := range tools {
		if m, _ := tl.(map[string]any); m["name"] == "echo_echo" {
			echo = m
		}
	}
	schema, _ := json.Marshal(echo["inputSchema"])
	if len(tools) != 7 || echo["description"] != "Echo text, optionally prefixed. Returns a JSON object with fields: output, text." || !strings.Contains(string(schema), `"required":["text"]`) {
		t.Fatalf("tools/list: %s", out)
	}
	res, out := inspector(t, work, storage, "--plugin-tool", "echo.echo", "--method", "tools/call", "--tool-name", "echo_echo", "--tool-arg", "text=hi", "--tool-arg", "repeat=3")
	if res["isError"] == true || !strings.Contains(contentText(res), `"output":"hihihi"`) {
		t.Errorf("tools/call: %s", out)
	}
	verifyStorage(t, storage)
}

// contentText joins the text contents of a tools/call result as the
// inspector prints it.
func contentText(res map[string]any) string {
	var b strings.Builder
	parts, _ := res["content"].([]any)
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok && m["type"] == "text" {
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// reel mcp-serve serves one client over stdio and records its session: a
// real reel process driven by the Go SDK's client, the client's own call
// ids kept, the recorded run ending when the client disconnects.
func TestMCPServeStdio(t *testing.T) {
	work, storage := t.TempDir(), t.TempDir()
	cs, end := mcpServe(t, reelBinary(t), work, append(os.Environ(), "SECRET_TOKEN=hunter2"),
		"--dir", work, "--record", "--storage", storage, "--tools", "Write,Bash", "--bash-timeout", "1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 2 {
		t.Fatalf("tools %v %v", lt, err)
	}
	r1, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Write", Arguments: map[string]any{"file_path": "x.txt", "content": "x"}, Meta: mcp.Meta{"claudecode/toolUseId": "toolu_abc"}})
	if err != nil || r1.IsError {
		t.Fatalf("Write: %v %+v", err, r1)
	}
	r2, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo \"[$SECRET_TOKEN]\"; sleep 30"}})
	if err != nil || !r2.IsError || !strings.Contains(mcpserver.Text(r2), "timed out after 1s") || !strings.Contains(mcpserver.Text(r2), `[]\n`) {
		t.Fatalf("Bash: %v %+v", err, r2)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": "x.txt"}}); err == nil {
		t.Error("a tool left out of --tools answered")
	}
	if stderr := end(); !strings.Contains(stderr, "mcp-serve: recording to ") {
		t.Errorf("stderr %q", stderr)
	}
	verifyStorage(t, storage)
	files, _ := filepath.Glob(filepath.Join(transcript.Dir(storage), "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	events, err := transcript.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range events {
		if ev.Type == transcript.ToolCall {
			ids = append(ids, ev.Tool().CallID)
		}
	}
	if strings.Join(ids, ",") != "toolu_abc,mcp-1" {
		t.Errorf("call ids %v", ids)
	}
	if last := events[len(events)-1]; last.Type != transcript.RunCompleted {
		t.Errorf("last event %s", last.Type)
	}
}

// Bad options are the user's mistake, said before anything is served.
func TestMCPServeBadOptions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tools", "Read,Fetch"}, `unknown tool "Fetch"`},
		{[]string{"--dir", "/nonexistent/dir"}, "is not a directory"},
		{[]string{"--bash-timeout", "soon"}, "--bash-timeout"},
	} {
		res := runBinary(t, t.TempDir(), append([]string{"mcp-serve"}, c.args...)...)
		if res.code != exitUser || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v: exit %d %q", c.args, res.code, res.stderr)
		}
	}
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"intercept_builtins":true,"plugin_tools":[{"plugin":"k8s","expose":["get"]}]}`: `plugin k8s is not installed`,
		`{"intercept_builtins":false}`:        "nothing to serve",
		`{"plugin_tools":[{"plugin":"k8s"}]}`: "each entry needs plugin and expose",
	} {
		cfg := filepath.Join(dir, "proxy.json")
		os.WriteFile(cfg, []byte(body), 0o600)
		if res := runBinaryEnv(t, dir, append(os.Environ(), "AWF_PLUGINS_PATH="+dir), "mcp-serve", "--config", cfg); res.code != exitUser || !strings.Contains(res.stderr, want) {
			t.Errorf("--config %s: exit %d %q", body, res.code, res.stderr)
		}
	}
	if res := runBinary(t, dir, "mcp-serve", "--plugin-tool", "echo"); res.code != exitUser || !strings.Contains(res.stderr, "want PLUGIN.OPERATION") {
		t.Errorf("--plugin-tool echo: exit %d %q", res.code, res.stderr)
	}
}

// mcpServe starts bin mcp-serve args in dir with env under the Go SDK's
// client; end closes the session and waits for the server to exit.
func mcpServe(t *testing.T, bin, dir string, env []string, args ...string) (cs *mcp.ClientSession, end func() string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp-serve"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%s mcp-serve: %v\n%s", bin, err, stderr.String())
	}
	var once sync.Once
	end = func() string {
		once.Do(func() { stopServe(t, cs, cmd, bin) })
		return stderr.String()
	}
	t.Cleanup(func() { end() })
	return cs, end
}

// stopServe closes a client session and waits for its server to exit.
func stopServe(t *testing.T, cs *mcp.ClientSession, cmd *exec.Cmd, bin string) {
	cs.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Errorf("%s mcp-serve did not end with its client", bin)
	}
}

// reel mcp-serve serves the operations of installed plugins (here reel's
// test plugin, a real process speaking AWF's protocol) as tools
// <plugin>_<op> with their schemas, alone when AWF's configuration turns
// the builtins off, each call recorded as a router pair.
func TestMCPServePluginTools(t *testing.T) {
	p := newPluginProject(t, "echo")
	cfg := filepath.Join(p.root, "proxy.json")
	writeFile(t, cfg, `{"intercept_builtins": false, "plugin_tools": [{"plugin": "echo", "expose": ["echo", "fail"]}]}`, 0o600)
	cs, end := mcpServe(t, reelBinary(t), p.root, p.env, "--config", cfg, "--record")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 2 || lt.Tools[0].Name != "echo_echo" || lt.Tools[1].Name != "echo_fail" {
		t.Fatalf("tools %+v %v", lt, err)
	}
	if schema, _ := json.Marshal(lt.Tools[0].InputSchema); !strings.Contains(string(schema), `"required":["text"]`) {
		t.Errorf("echo_echo schema %s", schema)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo_echo", Arguments: map[string]any{"text": "hi", "prefix": "> "}})
	if err != nil || r.IsError || !strings.Contains(mcpserver.Text(r), `"output":"\u003e hi"`) {
		t.Fatalf("echo_echo: %v %+v", err, r)
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo_fail", Arguments: map[string]any{"reason": "no"}})
	if err != nil || !r.IsError || !strings.Contains(mcpserver.Text(r), "refused: no") {
		t.Fatalf("echo_fail: %v %+v", err, r)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"file_path": "proxy.json"}}); err == nil {
		t.Error("a builtin answered with intercept_builtins false")
	}
	end()
	verifyStorage(t, p.storage)
	files, _ := filepath.Glob(filepath.Join(transcript.Dir(p.storage), "*.jsonl"))
	recorded, router := toolEvents(t, files...)
	if len(files) != 1 || recorded != 2 || router != 2 {
		t.Errorf("%d sessions, %d tool calls (%d router)", len(files), recorded, router)
	}
}

// AWF's own echo plugin (built from AWF's source, $REEL_AWF_PLUGINS)
// through reel mcp-serve --plugin-tool; with $REEL_AWF set too, AWF's
// mcp-serve is asked for the same tool, and reel describes it as AWF
// does (name, description, input schema).
func TestMCPServeAWFEchoPlugin(t *testing.T) {
	plugins := os.Getenv("REEL_AWF_PLUGINS")
	if plugins == "" {
		t.Skip("REEL_AWF_PLUGINS is not set: it names a directory holding AWF's example plugins (awf-plugin-echo/), built from AWF's source")
	}
	root := t.TempDir()
	proj, home := filepath.Join(root, "project"), filepath.Join(root, "home")
	installed := filepath.Join(proj, ".awf", "plugins", "awf-plugin-echo")
	copyTree(t, filepath.Join(plugins, "awf-plugin-echo"), installed)
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "AWF_PLUGINS_PATH=", "REEL_STORAGE="+filepath.Join(root, "storage"))
	t.Cleanup(func() { plugintest.NoneLeft(t, installed) })

	describe := func(bin string, args ...string) (*mcp.Tool, *mcp.CallToolResult) {
		cs, end := mcpServe(t, bin, proj, env, args...)
		defer end()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("%s: tools/list: %v", bin, err)
		}
		var echo *mcp.Tool
		for _, tl := range lt.Tools {
			if tl.Name == "echo_echo" {
				echo = tl
			}
		}
		if echo == nil {
			t.Fatalf("%s: no echo_echo in %+v", bin, lt.Tools)
		}
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo_echo", Arguments: map[string]any{"text": "hi", "prefix": "> "}})
		if err != nil {
			t.Fatalf("%s: echo_echo: %v", bin, err)
		}
		return echo, r
	}
	tool, res := describe(reelBinary(t), "--plugin-tool", "echo.echo", "--record")
	if res.IsError || !strings.Contains(mcpserver.Text(res), `"output":"\u003e hi"`) {
		t.Errorf("reel: echo_echo answered %q", mcpserver.Text(res))
	}
	verifyStorage(t, filepath.Join(root, "storage"))
	awf := os.Getenv("REEL_AWF")
	if awf == "" {
		t.Log("REEL_AWF is unset: AWF's own mcp-serve is not asked")
		return
	}
	cfg := filepath.Join(root, "proxy.json")
	writeFile(t, cfg, `{"intercept_builtins": false, "plugin_tools": [{"plugin": "echo", "expose": ["echo"]}]}`, 0o600)
	awfTool, awfRes := describe(awf, "--config", cfg)
	got, _ := json.Marshal(map[string]any{"description": tool.Description, "schema": tool.InputSchema})
	want, _ := json.Marshal(map[string]any{"description": awfTool.Description, "schema": awfTool.InputSchema})
	if string(got) != string(want) {
		t.Errorf("echo_echo:\nreel %s\nAWF  %s", got, want)
	}
	if awfRes.IsError != res.IsError || mcpserver.Text(awfRes) != mcpserver.Text(res) {
		t.Errorf("AWF answered %q (isError %v), reel %q", mcpserver.Text(awfRes), awfRes.IsError, mcpserver.Text(res))
	}
}
