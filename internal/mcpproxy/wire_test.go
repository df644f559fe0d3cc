package mcpproxy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/tools"
)

var testEP = Endpoint{URL: "http://127.0.0.1:4242/mcp", Token: "t0ken"}

var builtinNames = []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep"}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v", path, st, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Each CLI gets the endpoint the way it takes MCP servers, and in
// intercept mode the switches AWF uses to leave it only the proxy's tools.
func TestWire(t *testing.T) {
	on, off := Config{InterceptBuiltins: true}, Config{}
	server := `{"headers":{"Authorization":"Bearer t0ken"},`
	cases := []struct {
		provider string
		cfg      Config
		env      []string
		check    func(t *testing.T, w Wiring, dir string)
	}{
		{"claude", on, nil, func(t *testing.T, w Wiring, dir string) {
			f := filepath.Join(dir, "claude-mcp.json")
			if strings.Join(w.Args, "|") != "--mcp-config|"+f+"|--strict-mcp-config|--tools||--allowedTools|mcp__reel" || len(w.Env) != 0 {
				t.Fatalf("%q %q", w.Args, w.Env)
			}
			if got := jsonOf(readJSON(t, f)); got != `{"mcpServers":{"reel":`+server+`"type":"http","url":"http://127.0.0.1:4242/mcp"}}}` {
				t.Fatal(got)
			}
		}},
		{"claude", off, nil, func(t *testing.T, w Wiring, dir string) {
			if strings.Join(w.Args, "|") != "--mcp-config|"+filepath.Join(dir, "claude-mcp.json")+"|--allowedTools|mcp__reel" {
				t.Fatalf("%q", w.Args)
			}
		}},
		{"codex", on, nil, func(t *testing.T, w Wiring, _ string) {
			want := `-c|mcp_servers.reel.url="http://127.0.0.1:4242/mcp"|-c|mcp_servers.reel.bearer_token_env_var="REEL_MCP_TOKEN"|-s|read-only`
			if strings.Join(w.Args, "|") != want || strings.Join(w.Env, "|") != "REEL_MCP_TOKEN=t0ken" {
				t.Fatalf("%q %q", w.Args, w.Env)
			}
		}},
		{"gemini", on, nil, func(t *testing.T, w Wiring, dir string) {
			home := filepath.Join(dir, "gemini")
			if strings.Join(w.Args, "|") != "--allowed-mcp-server-names|reel" || strings.Join(w.Env, "|") != "GEMINI_CLI_HOME="+home {
				t.Fatalf("%q %q", w.Args, w.Env)
			}
			if got := jsonOf(readJSON(t, filepath.Join(home, ".gemini", "settings.json"))); got != `{"mcpServers":{"reel":`+server+`"httpUrl":"http://127.0.0.1:4242/mcp","trust":true}},"tools":{"core":["mcp_reel_Read","mcp_reel_Write","mcp_reel_Edit","mcp_reel_Bash","mcp_reel_Glob","mcp_reel_Grep"]}}` {
				t.Fatal(got)
			}
		}},
		{"github_copilot", on, nil, func(t *testing.T, w Wiring, dir string) {
			f := filepath.Join(dir, "copilot-mcp.json")
			if strings.Join(w.Args, "|") != "--additional-mcp-config|@"+f+"|--allow-tool=reel|--disable-builtin-mcps" {
				t.Fatalf("%q", w.Args)
			}
			if got := jsonOf(readJSON(t, f)); got != `{"mcpServers":{"reel":`+server+`"tools":["*"],"type":"http","url":"http://127.0.0.1:4242/mcp"}}}` {
				t.Fatal(got)
			}
		}},
		{"opencode", on, []string{`OPENCODE_CONFIG_CONTENT={"model":"m","mcp":{"mine":{"type":"local"}}}`}, func(t *testing.T, w Wiring, _ string) {
			want := `OPENCODE_CONFIG_CONTENT={"mcp":{"mine":{"type":"local"},"reel":{"enabled":true,"headers":{"Authorization":"Bearer t0ken"},"type":"remote","url":"http://127.0.0.1:4242/mcp"}},"model":"m"}`
			if len(w.Args) != 0 || strings.Join(w.Env, "|") != want {
				t.Fatalf("%q %q", w.Args, w.Env)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.provider, func(t *testing.T) {
			dir := t.TempDir()
			w, err := Wire(c.provider, c.cfg, testEP, dir, c.env, builtinNames)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, w, dir)
		})
	}
	if _, err := Wire("openai_compatible", on, testEP, t.TempDir(), nil, builtinNames); err == nil {
		t.Fatal("openai_compatible wired")
	}
	if _, err := Wire("opencode", on, testEP, t.TempDir(), []string{"OPENCODE_CONFIG_CONTENT=not json"}, builtinNames); err == nil || !strings.Contains(err.Error(), "OPENCODE_CONFIG_CONTENT") {
		t.Fatalf("bad OPENCODE_CONFIG_CONTENT: %v", err)
	}
}

// gemini gets a GEMINI_CLI_HOME of its own: links to the user's state,
// so sessions and credentials stay theirs, and their settings (comments
// and all) with reel's server added.
func TestWireGemini(t *testing.T) {
	user := t.TempDir()
	g := filepath.Join(user, ".gemini")
	os.MkdirAll(filepath.Join(g, "extensions"), 0o700)
	os.WriteFile(filepath.Join(g, "oauth_creds.json"), []byte(`{"token":"x"}`), 0o600)
	os.WriteFile(filepath.Join(g, "settings.json"), []byte("{\n  // theme\n  \"ui\": {\"theme\": \"a//b\"}, /* servers */\n  \"mcpServers\": {\"mine\": {\"command\": \"x\"}},\n  \"tools\": {\"exclude\": [\"web_fetch\"]}\n}\n"), 0o600)
	os.WriteFile(filepath.Join(user, ".env"), []byte("GEMINI_API_KEY=k\n"), 0o600)
	dir := t.TempDir()
	w, err := Wire("gemini", Config{InterceptBuiltins: true}, testEP, dir, []string{"HOME=" + user}, builtinNames)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "gemini")
	if w.Env[0] != "GEMINI_CLI_HOME="+home {
		t.Fatalf("env %q", w.Env)
	}
	got := jsonOf(readJSON(t, filepath.Join(home, ".gemini", "settings.json")))
	want := `{"mcpServers":{"mine":{"command":"x"},"reel":{"headers":{"Authorization":"Bearer t0ken"},"httpUrl":"http://127.0.0.1:4242/mcp","trust":true}},"tools":{"core":["mcp_reel_Read","mcp_reel_Write","mcp_reel_Edit","mcp_reel_Bash","mcp_reel_Glob","mcp_reel_Grep"],"exclude":["web_fetch"]},"ui":{"theme":"a//b"}}`
	if got != want {
		t.Fatalf("settings:\n%s\nwant\n%s", got, want)
	}
	for _, link := range []string{".gemini/oauth_creds.json", ".gemini/extensions", ".gemini/tmp", ".env"} {
		if target, err := os.Readlink(filepath.Join(home, link)); err != nil || !strings.HasPrefix(target, user) {
			t.Errorf("%s: %q %v", link, target, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(g, "settings.json")); !strings.Contains(string(b), "// theme") {
		t.Fatal("the user's settings changed")
	}
}

// vibe gets a VIBE_HOME of its own: the user's configuration and keys
// without their MCP servers, plus reel's.
func TestWireVibe(t *testing.T) {
	user := t.TempDir()
	os.WriteFile(filepath.Join(user, "config.toml"), []byte("active_model = \"devstral\"\n\n[[mcp_servers]]\nname = \"theirs\"\ntransport = \"stdio\"\ncommand = \"x\"\n\n[tools.bash]\npermission = \"always\"\n"), 0o600)
	os.WriteFile(filepath.Join(user, ".env"), []byte("MISTRAL_API_KEY=k\n"), 0o600)
	dir := t.TempDir()
	w, err := Wire("mistral_vibe", Config{InterceptBuiltins: true}, testEP, dir, []string{"VIBE_HOME=" + user}, builtinNames)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "vibe")
	if strings.Join(w.Env, "|") != "VIBE_HOME="+home || !strings.Contains(strings.Join(w.Args, " "), "--enabled-tools reel_Read --enabled-tools reel_Write") {
		t.Fatalf("%q %q", w.Args, w.Env)
	}
	conf, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	want := "active_model = \"devstral\"\n\n[tools.bash]\npermission = \"always\"\n\n[[mcp_servers]]\nname = \"reel\"\ntransport = \"http\"\nurl = \"http://127.0.0.1:4242/mcp\"\nheaders = { Authorization = \"Bearer t0ken\" }\n"
	if string(conf) != want {
		t.Fatalf("config.toml:\n%s\nwant:\n%s", conf, want)
	}
	if env, _ := os.ReadFile(filepath.Join(home, ".env")); string(env) != "MISTRAL_API_KEY=k\n" {
		t.Fatalf(".env %q", env)
	}
}

func TestAgentNamesAndSystemPrompt(t *testing.T) {
	defs := tools.Definitions()
	for provider, name := range map[string]string{"claude": "mcp__reel__Bash", "codex": "reel.Bash", "opencode": "reel_Bash", "mistral_vibe": "reel_Bash", "gemini": "mcp_reel_Bash"} {
		if got := AgentNames(provider, defs)[name]; got != "Bash" {
			t.Errorf("%s: %s -> %q", provider, name, got)
		}
	}
	if _, ok := AgentNames("claude", defs)["Bash"]; ok {
		t.Error("claude's own Bash taken for the proxy's")
	}
	on := Config{InterceptBuiltins: true}
	if got := SystemPrompt("codex", on, "Be brief."); !strings.HasPrefix(got, coexistenceNote) || !strings.HasSuffix(got, "\n\nBe brief.") {
		t.Errorf("codex: %q", got)
	}
	if got := SystemPrompt("claude", on, "Be brief."); got != "Be brief." {
		t.Errorf("claude: %q", got)
	}
	if got := SystemPrompt("opencode", Config{}, ""); got != "" {
		t.Errorf("opencode additive: %q", got)
	}
}

// FuzzStripJSONComments: the comment stripper never grows its input,
// keeps JSON without comments as it is, and leaves no comment in a
// document that parses.
func FuzzStripJSONComments(f *testing.F) {
	for _, s := range []string{`{"a": "//x"}`, "{\n// c\n\"a\": 1 /* b */}", `"\"//"`, "/*", "//", `{"a":"\\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := stripJSONComments(b)
		if len(out) > len(b) {
			t.Fatalf("grew: %q -> %q", b, out)
		}
		var v any
		if json.Unmarshal(b, &v) == nil && string(out) != string(b) {
			t.Fatalf("valid JSON changed: %q -> %q", b, out)
		}
	})
}

// FuzzWithoutMCPServers: whatever the user's vibe config holds, the copy
// keeps no MCP server table of theirs.
func FuzzWithoutMCPServers(f *testing.F) {
	for _, s := range []string{"a = 1\n[[mcp_servers]]\nname = \"x\"\n[b]\nc = 2\n", "mcp_servers = [\n {name = \"x\"},\n]\nz = 1\n", "[mcp_servers.x]\nq=1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := withoutMCPServers(b)
		for _, line := range strings.Split(string(out), "\n") {
			t := strings.TrimSpace(line)
			if t == "[[mcp_servers]]" || strings.HasPrefix(t, "[mcp_servers") {
				panic("an MCP server table of the user's survived: " + line)
			}
		}
	})
}
