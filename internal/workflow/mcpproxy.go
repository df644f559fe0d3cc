package workflow

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// MCPProxy is a state's mcp_proxy block (AWF's): whether an agent's file
// and shell tools go through reel's MCP server, which runs and records
// each call itself.
type MCPProxy struct {
	Pos Pos
	// Enable turns the proxy on; a block with enable false (or empty) is
	// inert, as in AWF.
	Enable bool
	// InterceptBuiltins: the agent gets the proxy's Read, Write, Edit,
	// Bash, Glob and Grep, and its own tools are turned off where its CLI
	// can do that. Without it the proxy serves only plugin tools, beside
	// the agent's own. It defaults to true when the proxy is enabled.
	InterceptBuiltins bool
	// PluginTools are plugin operations served as tools <plugin>_<op>.
	// Whether the plugins have them is checked against the plugins
	// themselves (plugin.Host.CheckWorkflow), not at load.
	PluginTools []PluginTools
}

// PluginTools names operations of one plugin to serve through the proxy.
type PluginTools struct {
	Pos    Pos
	Plugin string
	Expose []string
}

// BuiltinTools are the tools the proxy serves when it intercepts the
// agent's own: the names plugin tools must not take.
var BuiltinTools = []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep"}

var mcpProxyFields = []string{"enable", "intercept_builtins", "plugin_tools"}

// CoexistenceProviders are the CLIs that cannot turn their own file and
// shell tools off: through the proxy their agent gets both, and the calls
// it makes to its own tools bypass reel's router (AWF's coexistence mode).
var CoexistenceProviders = []string{"codex", "github_copilot", "opencode"}

// mcpProxy reads a state's mcp_proxy block. It reports what AWF's loader
// and validator refuse (USER.MCP_PROXY.*) that needs no plugin to tell:
// unknown keys, a proxy that would serve nothing, the same plugin or tool
// twice.
func (l *loader) mcpProxy(n *yaml.Node) *MCPProxy {
	m := &MCPProxy{Pos: pos(n)}
	fs, ok := l.mapping(n, "mcp_proxy")
	if !ok {
		return nil
	}
	intercept := (*bool)(nil)
	for _, f := range fs {
		switch f.key.Value {
		case "enable":
			m.Enable, _ = l.boolv(f.val, "mcp_proxy.enable")
		case "intercept_builtins":
			if b, ok := l.boolv(f.val, "mcp_proxy.intercept_builtins"); ok {
				intercept = &b
			}
		case "plugin_tools":
			m.PluginTools = l.pluginTools(f.val)
		default:
			l.unknownField(f.key, "mcp_proxy", mcpProxyFields, "")
		}
	}
	if intercept != nil {
		m.InterceptBuiltins = *intercept
	} else {
		m.InterceptBuiltins = m.Enable
	}
	if !m.Enable {
		return m
	}
	if !m.InterceptBuiltins && len(m.PluginTools) == 0 {
		l.errAt(m.Pos, "mcp_proxy: enabled with intercept_builtins false and no plugin_tools, the proxy would serve nothing; remove the block or give it plugin_tools")
	}
	names := map[string]bool{}
	if m.InterceptBuiltins {
		for _, b := range BuiltinTools {
			names[strings.ToLower(b)] = true
		}
	}
	plugins := map[string]bool{}
	for _, p := range m.PluginTools {
		if plugins[p.Plugin] {
			l.errAt(p.Pos, "mcp_proxy.plugin_tools: plugin %q is listed twice; list its operations once", p.Plugin)
			continue
		}
		plugins[p.Plugin] = true
		for _, op := range p.Expose {
			name := p.Plugin + "_" + op
			// Clients compare tool names case-insensitively in places;
			// so does the check.
			if names[strings.ToLower(name)] {
				l.errAt(p.Pos, "mcp_proxy.plugin_tools: tool %s is served twice; expose each operation once", name)
			}
			names[strings.ToLower(name)] = true
		}
	}
	return m
}

func (l *loader) pluginTools(n *yaml.Node) []PluginTools {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		l.errf(n, "mcp_proxy.plugin_tools must be a list of {plugin, expose} entries, got %s", kindName(n))
		return nil
	}
	var out []PluginTools
	for i, c := range n.Content {
		c = deref(c)
		what := fmt.Sprintf("mcp_proxy.plugin_tools[%d]", i)
		fs, ok := l.mapping(c, what)
		if !ok {
			continue
		}
		p := PluginTools{Pos: pos(c)}
		for _, f := range fs {
			switch f.key.Value {
			case "plugin":
				if s, ok := l.str(f.val, what+".plugin"); ok {
					if strings.TrimSpace(s) == "" {
						l.errf(f.val, "%s.plugin is empty", what)
					}
					p.Plugin = s
				}
			case "expose":
				p.Expose = l.strList(f.val, what+".expose")
				for j, op := range p.Expose {
					if strings.TrimSpace(op) == "" {
						l.errf(f.val, "%s.expose[%d] is empty", what, j)
					}
				}
			default:
				l.unknownField(f.key, what, []string{"plugin", "expose"}, "")
			}
		}
		switch {
		case p.Plugin == "" && len(fs) > 0:
			l.errf(c, "%s needs plugin", what)
		case len(p.Expose) == 0:
			l.errf(c, "%s needs expose, the list of operations to serve", what)
		}
		out = append(out, p)
	}
	return out
}

// finishMCPProxy checks a state's proxy against the rest of the state:
// only an agent step has tools to proxy, and some CLIs keep their own
// tools beside the proxy's.
func (l *loader) finishMCPProxy(s *State) {
	m := s.MCPProxy
	if m == nil || !m.Enable {
		return
	}
	if s.Type != TypeAgent {
		l.warnAt(m.Pos, "mcp_proxy is ignored on a %s state: only an agent step has tools to proxy", s.Type)
		return
	}
	if !s.Agent.providerStatic(s.Provider) {
		return
	}
	switch {
	case contains(CoexistenceProviders, s.Provider) && m.InterceptBuiltins:
		l.warnAt(m.Pos, "mcp_proxy on provider %s runs in coexistence mode: %s cannot turn its own tools off, so the agent may still use them, and those calls bypass reel's router (they are recorded as the agent reports them); use claude or openai_compatible for MCP-only isolation", s.Provider, s.Provider)
	case s.Provider == "mistral_vibe":
		o := staticOptions(s.Options)
		if len(o) != len(s.Options) {
			return // an option is known only at run time
		}
		profile, _ := o["agent_profile"].(string)
		trust, _ := o["trust"].(bool)
		skip, _ := o["dangerously_skip_permissions"].(bool)
		if !skip && profile != "auto-approve" || !trust {
			l.warnAt(m.Pos, "mcp_proxy on provider mistral_vibe: vibe refuses MCP tool calls in a non-interactive run unless options.agent_profile is auto-approve and options.trust is true")
		}
	}
}
