package modeltest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CLIsEnv names the variable holding the npm prefix the published agent
// CLIs are installed under (their executables in node_modules/.bin);
// .ci/run installs them there from scripts/agent-clis and sets it.
const CLIsEnv = "REEL_AGENT_CLIS"

// CLIProviders are the reel providers whose real CLI runs offline against
// a Server. mistral_vibe is not among them: it is on PyPI only, which
// this project cannot reach.
var CLIProviders = []string{"claude", "codex", "gemini", "github_copilot", "opencode"}

// CLI is a real agent CLI set up to talk to a Server and nothing else.
type CLI struct {
	Provider string
	// Path is the executable.
	Path string
	// Home is a fresh home directory holding the CLI's config and state.
	Home string
	// Env is the whole environment to run the CLI (or reel, which passes
	// it on) with: PATH, HOME and the XDG directories inside Home, the
	// base URL and a dummy key, and every switch that keeps the CLI off
	// the internet (telemetry, update checks, plugin installs), with the
	// server as the HTTP(S) proxy that records any attempt (Escapes).
	// Nothing of the test's own environment leaks in beyond PATH.
	Env []string
	// Model is the model a step asks for (options.model); WireModel is
	// the name the server then sees.
	Model, WireModel string
	// Options are the agent step options that let the CLI use its
	// native tools without asking (claude as root refuses
	// --dangerously-skip-permissions, so it gets allowed_tools).
	Options map[string]any
}

// FindCLI returns the executable of provider's CLI under $REEL_AGENT_CLIS,
// skipping the test when the variable is unset and failing it when the
// CLI is missing there.
func FindCLI(t testing.TB, provider string) string {
	t.Helper()
	dir := os.Getenv(CLIsEnv)
	if dir == "" {
		t.Skipf("%s is unset: the real agent CLIs are not installed (.ci/run installs them with scripts/agent-clis.sh)", CLIsEnv)
	}
	bin, ok := map[string]string{
		"claude": "claude", "codex": "codex", "gemini": "gemini",
		"github_copilot": "copilot", "opencode": "opencode",
	}[provider]
	if !ok {
		t.Fatalf("modeltest: no real CLI for provider %q (have %s)", provider, strings.Join(CLIProviders, ", "))
	}
	p := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("modeltest: %s: %v (reinstall with scripts/agent-clis.sh)", provider, err)
	}
	return p
}

// CLI sets up provider's real CLI to talk to s: a fresh home with the
// CLI's config in it, and the environment to run it with. It skips the
// test when the CLIs are not installed.
func (s *Server) CLI(t testing.TB, provider string) *CLI {
	t.Helper()
	c := &CLI{Provider: provider, Path: FindCLI(t, provider), Home: t.TempDir()}
	c.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + c.Home,
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(c.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(c.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(c.Home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(c.Home, ".cache"),
		"TMPDIR=" + os.TempDir(),
		// The server is every CLI's proxy too: what tries to leave the
		// machine through it is refused and recorded (Server.Escapes),
		// so a CLI release that starts phoning home fails the test
		// instead of hanging where there is no internet.
		"HTTPS_PROXY=" + s.URL, "HTTP_PROXY=" + s.URL, "https_proxy=" + s.URL, "http_proxy=" + s.URL,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	switch provider {
	case "claude":
		s.setupClaude(t, c)
	case "codex":
		s.setupCodex(t, c)
	case "gemini":
		s.setupGemini(t, c)
	case "github_copilot":
		s.setupCopilot(t, c)
	case "opencode":
		s.setupOpencode(t, c)
	default:
		t.Fatalf("modeltest: no real CLI for provider %q", provider)
	}
	return c
}

func (s *Server) setupClaude(t testing.TB, c *CLI) {
	c.Model, c.WireModel = "claude-sonnet-4-5", "claude-sonnet-4-5"
	c.Options = map[string]any{"allowed_tools": "Write,Edit,Read,Bash"}
	c.Env = append(c.Env,
		"ANTHROPIC_BASE_URL="+s.URL,
		"ANTHROPIC_API_KEY=sk-ant-scripted",
		// One switch for the update check, telemetry, error
		// reporting and the feedback survey; the others for the
		// versions that read them one by one.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
	)
}

func (s *Server) setupCodex(t testing.TB, c *CLI) {
	c.Model, c.WireModel = "gpt-5.5", "gpt-5.5"
	c.Options = map[string]any{"dangerously_skip_permissions": true}
	codexHome := filepath.Join(c.Home, ".codex")
	// OPENAI_BASE_URL does not reach the Responses client (it tries
	// the WebSocket endpoint at api.openai.com first): a provider of
	// its own does. The features turned off fetch plugins, apps and
	// model lists from github.com and chatgpt.com at start.
	c.write(t, ".codex/config.toml", fmt.Sprintf(`model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted model server"
base_url = %q
env_key = "OPENAI_API_KEY"
wire_api = "responses"
supports_websockets = false

[features]
plugins = false
remote_plugin = false
apps = false
plugin_sharing = false
api_key_model_discovery = false
in_app_updates = false
tool_suggest = false

[analytics]
enabled = false
`, s.URL+"/v1"))
	c.Env = append(c.Env, "CODEX_HOME="+codexHome, "OPENAI_API_KEY=sk-scripted")
}

func (s *Server) setupGemini(t testing.TB, c *CLI) {
	c.Model, c.WireModel = "gemini-2.5-pro", "gemini-2.5-pro"
	c.Options = map[string]any{"dangerously_skip_permissions": true}
	c.write(t, ".gemini/settings.json", `{"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},`+
		`"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"security":{"auth":{"selectedType":"gemini-api-key"}}}`)
	c.Env = append(c.Env,
		"GEMINI_API_KEY=scripted",
		"GOOGLE_GEMINI_BASE_URL="+s.URL,
		// A headless gemini refuses (exit 55) a folder the user has
		// not trusted; a test's temp dir never is.
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	)
}

func (s *Server) setupCopilot(t testing.TB, c *CLI) {
	c.Model, c.WireModel = "gpt-5.5", "gpt-5.5"
	c.Options = map[string]any{"allow_all": true}
	// The binary unpacks itself into its cache on first start (5 s
	// or more): one cache beside the installed CLIs serves every
	// test.
	c.Env = append(c.Env,
		"COPILOT_HOME="+filepath.Join(c.Home, ".copilot"),
		"COPILOT_CACHE_HOME="+filepath.Join(os.Getenv(CLIsEnv), "cache", "copilot"),
		// Offline mode: no GitHub sign-in, telemetry, web tools
		// or updates; the model is the BYOK provider below.
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL="+s.URL+"/v1",
		"COPILOT_PROVIDER_TYPE=openai",
		"COPILOT_PROVIDER_API_KEY=sk-scripted",
		"COPILOT_MODEL="+c.Model,
	)
}

func (s *Server) setupOpencode(t testing.TB, c *CLI) {
	c.Model, c.WireModel = "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"
	c.Options = map[string]any{"dangerously_skip_permissions": true}
	cfg, _ := json.Marshal(map[string]any{
		"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
		"provider": map[string]any{"anthropic": map[string]any{"options": map[string]any{
			"baseURL": s.URL + "/v1", "apiKey": "sk-ant-scripted"}}},
	})
	c.write(t, ".config/opencode/opencode.json", string(cfg))
	// opencode installs its plugin SDK from npm into every config
	// directory at start unless the directory's package.json and
	// package-lock.json already name it.
	c.write(t, ".config/opencode/package.json", `{"dependencies":{"@opencode-ai/plugin":"*"}}`)
	c.write(t, ".config/opencode/package-lock.json", `{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}`)
	if err := os.MkdirAll(filepath.Join(c.Home, ".config", "opencode", "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.Env = append(c.Env,
		"OPENCODE_DISABLE_AUTOUPDATE=true",
		"OPENCODE_DISABLE_MODELS_FETCH=true",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=true",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=true",
		"OPENCODE_DISABLE_SHARE=true",
		"OPENCODE_DISABLE_CLAUDE_CODE=true",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=true",
	)
}

// write puts a file of the CLI's configuration under its home.
func (c *CLI) write(t testing.TB, rel, content string) {
	t.Helper()
	p := filepath.Join(c.Home, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteFile is the tool call that makes the CLI write content to path
// (relative to its working directory) with its own file tool.
func (c *CLI) WriteFile(path, content string) ToolCall {
	switch c.Provider {
	case "claude":
		return ToolCall{Name: "Write", Input: map[string]any{"file_path": path, "content": content}}
	case "gemini":
		return ToolCall{Name: "write_file", Input: map[string]any{"file_path": path, "content": content}}
	case "opencode":
		return ToolCall{Name: "write", Input: map[string]any{"filePath": path, "content": content}}
	case "codex", "github_copilot":
		// Both offer GPT-5 models apply_patch as a freeform tool.
		var b strings.Builder
		fmt.Fprintf(&b, "*** Begin Patch\n*** Add File: %s\n", path)
		for _, l := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
			b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
		b.WriteString("*** End Patch\n")
		return ToolCall{Name: "apply_patch", Input: b.String()}
	}
	panic("modeltest: WriteFile for " + c.Provider)
}

// Shell is the tool call that makes the CLI run command with its own
// shell tool.
func (c *CLI) Shell(command string) ToolCall {
	switch c.Provider {
	case "claude":
		return ToolCall{Name: "Bash", Input: map[string]any{"command": command}}
	case "codex":
		return ToolCall{Name: "exec_command", Input: map[string]any{"cmd": command}}
	case "gemini":
		return ToolCall{Name: "run_shell_command", Input: map[string]any{"command": command}}
	case "opencode", "github_copilot":
		return ToolCall{Name: "bash", Input: map[string]any{"command": command, "description": "scripted command"}}
	}
	panic("modeltest: Shell for " + c.Provider)
}
