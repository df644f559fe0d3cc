package mcpproxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/reelhq/reel/internal/tools"
)

// Endpoint is where the agent reaches the proxy.
type Endpoint struct {
	URL   string
	Token string
}

// Wiring is what a CLI's command line and environment gain.
type Wiring struct {
	Args []string
	Env  []string
}

// TokenEnv is the variable a CLI that reads its bearer token from the
// environment (codex) finds the proxy's token in.
const TokenEnv = "REEL_MCP_TOKEN"

// coexistence lists the CLIs that keep their own tools beside the
// proxy's (their agent is told to prefer the proxy's).
var coexistence = []string{"codex", "github_copilot", "opencode"}

// Wire returns how provider's CLI reaches ep, writing the files it needs
// (0600) into dir, a private directory the caller removes afterwards. env
// is the environment the CLI will run with, for configuration the wiring
// extends rather than replaces; served names the tools the proxy serves.
func Wire(provider string, cfg Config, ep Endpoint, dir string, env []string, served []string) (Wiring, error) {
	auth := map[string]string{"Authorization": "Bearer " + ep.Token}
	var w Wiring
	var err error
	switch provider {
	case "claude":
		// --mcp-config FILE [--strict-mcp-config --tools ""] --allowedTools mcp__reel
		f, e := writeJSON(dir, "claude-mcp.json", map[string]any{"mcpServers": map[string]any{
			ServerName: map[string]any{"type": "http", "url": ep.URL, "headers": auth},
		}})
		err = e
		w.Args = []string{"--mcp-config", f}
		if cfg.InterceptBuiltins {
			// Only the servers of this file, and none of claude's own
			// tools.
			w.Args = append(w.Args, "--strict-mcp-config", "--tools", "")
		}
		// reel's router is the permission layer of its tools (confined
		// to the working directory, Bash with an allow-listed
		// environment): claude -p runs them without asking.
		w.Args = append(w.Args, "--allowedTools", "mcp__"+ServerName)
	case "codex":
		// -c mcp_servers.reel.url=… -c mcp_servers.reel.bearer_token_env_var=REEL_MCP_TOKEN
		w.Args = []string{
			"-c", "mcp_servers." + ServerName + ".url=" + strconv.Quote(ep.URL),
			"-c", "mcp_servers." + ServerName + ".bearer_token_env_var=" + strconv.Quote(TokenEnv),
		}
		w.Env = []string{TokenEnv + "=" + ep.Token}
		if cfg.InterceptBuiltins {
			// codex's own shell cannot be turned off; read-only is the
			// closest it comes (AWF does the same).
			w.Args = append(w.Args, "-s", "read-only")
		}
	case "gemini":
		// GEMINI_CLI_HOME=DIR mirroring the user's ~/.gemini, whose
		// settings.json gains server "reel" (trusted) and, intercepting,
		// a tools.core allow-list of the proxy's tools only;
		// [--allowed-mcp-server-names reel]. gemini reads a system
		// settings file only when root owns it and every directory above
		// it, so a user's run cannot add a server there.
		home, e := geminiHome(dir, cfg, ep, env, served)
		err = e
		w.Env = []string{"GEMINI_CLI_HOME=" + home}
		if cfg.InterceptBuiltins {
			w.Args = []string{"--allowed-mcp-server-names", ServerName}
		}
	case "github_copilot":
		// --additional-mcp-config @FILE --allow-tool=reel [--disable-builtin-mcps]
		f, e := writeJSON(dir, "copilot-mcp.json", map[string]any{"mcpServers": map[string]any{
			ServerName: map[string]any{"type": "http", "url": ep.URL, "headers": auth, "tools": []string{"*"}},
		}})
		err = e
		w.Args = []string{"--additional-mcp-config", "@" + f, "--allow-tool=" + ServerName}
		if cfg.InterceptBuiltins {
			w.Args = append(w.Args, "--disable-builtin-mcps")
		}
	case "opencode":
		// OPENCODE_CONFIG_CONTENT={"mcp":{"reel":{…}}}, merged into what
		// the step's environment already sets there.
		var conf map[string]any
		if v, ok := lookupEnv(env, "OPENCODE_CONFIG_CONTENT"); ok && strings.TrimSpace(v) != "" {
			if e := json.Unmarshal([]byte(v), &conf); e != nil {
				return w, fmt.Errorf("mcp proxy: OPENCODE_CONFIG_CONTENT in the step's environment is not a JSON object: %v", e)
			}
		}
		if conf == nil {
			conf = map[string]any{}
		}
		mcp, _ := conf["mcp"].(map[string]any)
		if mcp == nil {
			mcp = map[string]any{}
		}
		mcp[ServerName] = map[string]any{"type": "remote", "url": ep.URL, "headers": auth, "enabled": true}
		conf["mcp"] = mcp
		b, e := json.Marshal(conf)
		err = e
		w.Env = []string{"OPENCODE_CONFIG_CONTENT=" + string(b)}
	case "mistral_vibe":
		// VIBE_HOME=DIR holding the user's config.toml without its MCP
		// servers, plus reel's; [--enabled-tools reel_Read …]
		home, e := vibeHome(dir, ep, env)
		err = e
		w.Env = []string{"VIBE_HOME=" + home}
		if cfg.InterceptBuiltins {
			for _, name := range served {
				w.Args = append(w.Args, "--enabled-tools", ServerName+"_"+name)
			}
		}
	default:
		return w, fmt.Errorf("mcp proxy: provider %s takes no MCP server (openai_compatible and anthropic call reel's tools directly)", provider)
	}
	if err != nil {
		return w, fmt.Errorf("mcp proxy: wire %s: %w", provider, err)
	}
	return w, nil
}

// agentPrefixes are what each CLI puts before a tool's name when it
// reports an MCP tool in its stream (as reel's normalizer names it).
var agentPrefixes = map[string][]string{
	"claude":         {"mcp__" + ServerName + "__"},
	"codex":          {ServerName + "."},
	"gemini":         {"mcp_" + ServerName + "_", ServerName + "__", ""},
	"github_copilot": {ServerName + "-", ServerName + "/", ServerName + "__"},
	"opencode":       {ServerName + "_"},
	"mistral_vibe":   {ServerName + "_"},
}

// AgentNames maps the names provider's agent calls the tools of defs by
// to the tools.
func AgentNames(provider string, defs []tools.Definition) map[string]string {
	prefixes, ok := agentPrefixes[provider]
	if !ok {
		for _, p := range agentPrefixes {
			prefixes = append(prefixes, p...)
		}
	}
	names := map[string]string{}
	for _, d := range defs {
		for _, p := range prefixes {
			names[p+d.Name] = d.Name
		}
	}
	return names
}

// coexistenceNote leads the system prompt of a CLI that keeps its own
// tools beside the proxy's.
const coexistenceNote = "Use the tools of the MCP server \"" + ServerName + "\" (Read, Write, Edit, Bash, Glob, Grep) for every file and shell action; do not use your built-in tools."

// SystemPrompt returns the system prompt a proxied step of provider
// sends: system itself, led by a note to use the proxy's tools when the
// CLI cannot turn its own off.
func SystemPrompt(provider string, cfg Config, system string) string {
	if !cfg.InterceptBuiltins || !slices.Contains(coexistence, provider) {
		return system
	}
	if system == "" {
		return coexistenceNote
	}
	return coexistenceNote + "\n\n" + system
}

func writeJSON(dir, name string, v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return "", err
	}
	return p, nil
}

// geminiHome makes a GEMINI_CLI_HOME for one gemini run: a .gemini whose
// entries are links to the user's (sessions, credentials, trusted folders
// and extensions stay the user's, so a later turn resumes the session),
// except settings.json, the user's settings with reel's server added; and
// links to the user's ~/.env and ~/.agents.
func geminiHome(dir string, cfg Config, ep Endpoint, env []string, served []string) (string, error) {
	user, ok := lookupEnv(env, "GEMINI_CLI_HOME")
	if !ok || user == "" {
		user, _ = lookupEnv(env, "HOME")
	}
	home := filepath.Join(dir, "gemini")
	mine := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(mine, 0o700); err != nil {
		return "", err
	}
	settings := map[string]any{}
	if user != "" {
		theirs := filepath.Join(user, ".gemini")
		// gemini makes its session directory on first use; made here,
		// it is the user's, where the next turn finds the session.
		if err := os.MkdirAll(filepath.Join(theirs, "tmp"), 0o700); err != nil {
			return "", err
		}
		entries, err := os.ReadDir(theirs)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			if e.Name() == "settings.json" {
				continue
			}
			if err := os.Symlink(filepath.Join(theirs, e.Name()), filepath.Join(mine, e.Name())); err != nil {
				return "", err
			}
		}
		if b, err := os.ReadFile(filepath.Join(theirs, "settings.json")); err == nil {
			if err := json.Unmarshal(stripJSONComments(b), &settings); err != nil {
				return "", fmt.Errorf("%s: %w", filepath.Join(theirs, "settings.json"), err)
			}
		} else if !os.IsNotExist(err) {
			return "", err
		}
		for _, name := range []string{".env", ".agents"} {
			if _, err := os.Lstat(filepath.Join(user, name)); err == nil {
				if err := os.Symlink(filepath.Join(user, name), filepath.Join(home, name)); err != nil {
					return "", err
				}
			}
		}
	}
	servers, _ := settings["mcpServers"].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
	}
	servers[ServerName] = map[string]any{"httpUrl": ep.URL, "headers": map[string]string{"Authorization": "Bearer " + ep.Token}, "trust": true}
	settings["mcpServers"] = servers
	if cfg.InterceptBuiltins {
		ts, _ := settings["tools"].(map[string]any)
		if ts == nil {
			ts = map[string]any{}
		}
		// The core list is an allow-list: none of gemini's own tools is
		// on it, only the proxy's (which gemini calls mcp_reel_<tool>).
		var core []string
		for _, name := range served {
			core = append(core, "mcp_"+ServerName+"_"+name)
		}
		ts["core"] = core
		settings["tools"] = ts
	}
	if _, err := writeJSON(mine, "settings.json", settings); err != nil {
		return "", err
	}
	return home, nil
}

// stripJSONComments blanks the // and /* */ comments gemini allows in its
// settings, outside strings, keeping every other byte.
func stripJSONComments(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr:
			out = append(out, c)
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			if i < len(b) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			i += 2
			for i+1 < len(b) && !(b[i] == '*' && b[i+1] == '/') {
				i++
			}
			i++
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

// vibeHome makes a VIBE_HOME for one vibe run: the user's config.toml
// (from the step's VIBE_HOME, else ~/.vibe) without its MCP servers, then
// reel's, and the user's .env (vibe's API keys).
func vibeHome(dir string, ep Endpoint, env []string) (string, error) {
	home := filepath.Join(dir, "vibe")
	if err := os.Mkdir(home, 0o700); err != nil {
		return "", err
	}
	src, ok := lookupEnv(env, "VIBE_HOME")
	if !ok || src == "" {
		if h, ok := lookupEnv(env, "HOME"); ok && h != "" {
			src = filepath.Join(h, ".vibe")
		}
	}
	var conf []byte
	if src != "" {
		if b, err := os.ReadFile(filepath.Join(src, "config.toml")); err == nil {
			conf = withoutMCPServers(b)
		} else if !os.IsNotExist(err) {
			return "", err
		}
		if b, err := os.ReadFile(filepath.Join(src, ".env")); err == nil {
			if err := os.WriteFile(filepath.Join(home, ".env"), b, 0o600); err != nil {
				return "", err
			}
		} else if !os.IsNotExist(err) {
			return "", err
		}
	}
	var b bytes.Buffer
	b.Write(conf)
	fmt.Fprintf(&b, "\n[[mcp_servers]]\nname = %s\ntransport = \"http\"\nurl = %s\nheaders = { Authorization = %s }\n",
		strconv.Quote(ServerName), strconv.Quote(ep.URL), strconv.Quote("Bearer "+ep.Token))
	if err := os.WriteFile(filepath.Join(home, "config.toml"), b.Bytes(), 0o600); err != nil {
		return "", err
	}
	return home, nil
}

// withoutMCPServers drops the [[mcp_servers]] tables and an mcp_servers
// assignment from a vibe config.toml: the run gets reel's server only.
func withoutMCPServers(conf []byte) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(conf))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	skipTable, depth := false, 0
	for sc.Scan() {
		line := sc.Text()
		t := strings.TrimSpace(line)
		if depth > 0 {
			depth += strings.Count(line, "[") - strings.Count(line, "]")
			continue
		}
		if strings.HasPrefix(t, "[") {
			skipTable = t == "[[mcp_servers]]" || strings.HasPrefix(t, "[mcp_servers")
			if skipTable {
				continue
			}
		}
		if skipTable {
			continue
		}
		if k, _, ok := strings.Cut(t, "="); ok && strings.TrimSpace(k) == "mcp_servers" {
			depth = strings.Count(line, "[") - strings.Count(line, "]")
			continue
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
