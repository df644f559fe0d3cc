package mcpproxy

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"

	"github.com/reelhq/reel/internal/mcpserver"
	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/plugin/plugintest"
	"github.com/reelhq/reel/transcript"
)

// testPlugins opens a host on reel's test plugins names (our own,
// speaking AWF's plugin protocol); db's database is dbDir/app.db.
func testPlugins(t *testing.T, dbDir string, names ...string) *plugin.Host {
	t.Helper()
	return plugintest.Open(t, plugin.Options{Config: map[string]map[string]any{"db": {"database": filepath.Join(dbDir, "app.db")}}}, names...)
}

// plugin_tools: the exposed operations of real plugin processes are
// listed with their schemas beside the builtins, run through the router,
// answered as AWF answers them (the outputs as JSON, a failure as a tool
// error with its message) and recorded as one router pair each.
func TestProxyPluginTools(t *testing.T) {
	dir := t.TempDir()
	h := testPlugins(t, dir, "echo", "db")
	s := &sink{}
	cfg := Config{InterceptBuiltins: true, Plugins: h, PluginTools: []PluginTools{
		{Plugin: "echo", Expose: []string{"echo", "fail"}},
		{Plugin: "db", Expose: []string{"exec", "query"}},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := Start(ctx, cfg, Options{Provider: "claude", Dir: dir, Emit: s.emit, Env: []string{}, Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close("done")
	if p.Names["mcp__reel__echo_echo"] != "echo_echo" || p.Names["mcp__reel__Read"] != "Read" {
		t.Errorf("agent names %v", p.Names)
	}
	cs := claudeClient(t, p)
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	var names []string
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "Bash,Edit,Glob,Grep,Read,Write,db_exec,db_query,echo_echo,echo_fail" {
		t.Fatalf("tools %v", names)
	}
	echo := byName["echo_echo"]
	schema, _ := json.Marshal(echo.InputSchema)
	if echo.Description != "Echo text, optionally prefixed. Returns a JSON object with fields: output, text." ||
		!strings.Contains(string(schema), `"required":["text"]`) || !strings.Contains(string(schema), `"repeat":{"default":1,"description":"How many times.","type":"integer"}`) {
		t.Errorf("echo_echo: %q %s", echo.Description, schema)
	}
	if d := byName["echo_fail"].Description; d != "Operation 'fail' from plugin 'echo'." {
		t.Errorf("echo_fail description %q", d)
	}
	if schema, _ := json.Marshal(byName["db_exec"].InputSchema); !strings.Contains(string(schema), `"args":{"description":"Its parameters.","items":{},"type":"array"}`) {
		t.Errorf("db_exec schema %s", schema)
	}

	cases := []struct {
		tool     string
		args     map[string]any
		errWant  string
		textWant string
	}{
		{"echo_echo", map[string]any{"text": "hi", "repeat": 2}, "", `"output":"hihi"`},
		{"echo_fail", map[string]any{"reason": "no"}, "echo.fail: refused: no", ""},
		{"echo_echo", map[string]any{"repeat": 1}, "echo.echo: inputs:", ""},
		{"db_exec", map[string]any{"sql": "CREATE TABLE t (v TEXT)"}, "", `"rows_affected"`},
		{"db_exec", map[string]any{"sql": "INSERT INTO t VALUES (?), (?)", "args": []any{"a", "b"}}, "", `"rows_affected":2`},
		{"db_query", map[string]any{"sql": "SELECT v FROM t ORDER BY v"}, "", `"count":2`},
		{"Read", map[string]any{"file_path": "app.db"}, "binary file", ""},
	}
	for _, c := range cases {
		res := call(t, cs, c.tool, c.args)
		text := mcpserver.Text(res)
		if res.IsError != (c.errWant != "") || !strings.Contains(text, c.errWant) || !strings.Contains(text, c.textWant) {
			t.Errorf("%s %v: isError %v, answer %q", c.tool, c.args, res.IsError, text)
		}
	}
	// An operation the step does not expose is no tool of the server:
	// the client's call fails in MCP and reaches neither plugin nor router.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo_emit", Arguments: map[string]any{"type": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("echo_emit: %v", err)
	}
	if err := p.Close("done"); err != nil {
		t.Fatal(err)
	}
	// The plugin changed the database on disk.
	db, err := sql.Open("sqlite", filepath.Join(dir, "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Errorf("rows in app.db: %d %v", n, err)
	}
	if len(s.events) != 2*len(cases) {
		t.Fatalf("%d events for %d calls: %q", len(s.events), len(cases), s.lines())
	}
	for i, c := range cases {
		call, res := s.events[2*i].Tool(), s.events[2*i+1].Tool()
		if s.events[2*i].Type != transcript.ToolCall || s.events[2*i+1].Type != transcript.ToolResult ||
			call.CallID != res.CallID || call.Name != c.tool || res.Fidelity != transcript.FidelityRouter || call.Fidelity != transcript.FidelityRouter {
			t.Fatalf("pair %d: %+v / %+v", i, call, res)
		}
		if !strings.Contains(res.Error, c.errWant) || (c.errWant == "") != (res.Error == "") {
			t.Errorf("%s recorded error %q, want %q", c.tool, res.Error, c.errWant)
		}
	}
	if out, _ := json.Marshal(s.events[1].Tool().Output); !strings.Contains(string(out), `"output":"hihi"`) {
		t.Errorf("echo's recorded output %s", out)
	}
}

// A step whose plugin_tools name a plugin or an operation that is not
// there does not start, and says which.
func TestProxyPluginToolsMissing(t *testing.T) {
	h := testPlugins(t, t.TempDir(), "echo")
	for _, c := range []struct {
		host *plugin.Host
		pt   PluginTools
		want string
	}{
		{h, PluginTools{Plugin: "echo", Expose: []string{"shout"}}, `plugin echo has no operation "shout" (it has: echo, fail, emit)`},
		{h, PluginTools{Plugin: "k8s", Expose: []string{"get"}}, "k8s"},
		{nil, PluginTools{Plugin: "echo", Expose: []string{"echo"}}, "plugin echo: no plugins are installed"},
	} {
		_, err := Start(context.Background(), Config{Plugins: c.host, PluginTools: []PluginTools{c.pt}},
			Options{Provider: "claude", Dir: t.TempDir(), Emit: (&sink{}).emit})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.pt, err, c.want)
		}
	}
}

// The CLIs that take an allow-list of the proxy's tools get the plugin
// tools on it too.
func TestWirePluginTools(t *testing.T) {
	served := append(slices.Clone(builtinNames), "echo_echo")
	cfg := Config{InterceptBuiltins: true}
	user := t.TempDir()
	os.MkdirAll(filepath.Join(user, ".gemini"), 0o700)
	w, err := Wire("gemini", cfg, testEP, t.TempDir(), []string{"HOME=" + user}, served)
	if err != nil {
		t.Fatal(err)
	}
	home := strings.TrimPrefix(w.Env[0], "GEMINI_CLI_HOME=")
	settings := readJSON(t, filepath.Join(home, ".gemini", "settings.json"))
	core, _ := json.Marshal(settings["tools"].(map[string]any)["core"])
	if !strings.Contains(string(core), `"mcp_reel_echo_echo"`) {
		t.Errorf("gemini core %s", core)
	}
	w, err = Wire("mistral_vibe", cfg, testEP, t.TempDir(), []string{"VIBE_HOME=" + t.TempDir()}, served)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(w.Args, " "), "--enabled-tools reel_echo_echo") {
		t.Errorf("vibe args %q", w.Args)
	}
}

func TestCheckToolName(t *testing.T) {
	for name, ok := range map[string]bool{
		"echo_echo": true, "k8s_get-pods": true, strings.Repeat("a", maxToolName): true,
		"db_query.v2": false, "echo_say hi": false, "é_x": false, strings.Repeat("a", maxToolName+1): false,
	} {
		if err := checkToolName(name); (err == nil) != ok {
			t.Errorf("%q: %v", name, err)
		}
	}
}
