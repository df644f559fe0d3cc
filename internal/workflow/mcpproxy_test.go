package workflow

import (
	"strings"
	"testing"
)

// proxyStep is a workflow with one agent step of provider, block its
// mcp_proxy lines (indented under the step) and extra its other fields.
func proxyStep(provider, block, extra string) []byte {
	return []byte("name: x\nstates:\n  initial: a\n  a:\n    type: agent\n    provider: " + provider +
		"\n    prompt: hi\n" + extra + "    mcp_proxy:\n" + block + "    on_success: done\n  done:\n    type: terminal\n")
}

func TestMCPProxyLoads(t *testing.T) {
	for _, c := range []struct {
		name, block         string
		enable, intercept   bool
		nilBlock, warnEmpty bool
	}{
		{"enabled, intercept by default", "      enable: true\n", true, true, false, true},
		{"intercept explicit", "      enable: true\n      intercept_builtins: true\n", true, true, false, true},
		{"empty block is inert", "      {}\n", false, false, false, true},
		{"disabled", "      enable: false\n      intercept_builtins: false\n", false, false, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			wf, err := Parse(proxyStep("claude", c.block, ""), "f.yaml", Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := wf.States["a"].MCPProxy
			if m == nil || m.Enable != c.enable || m.InterceptBuiltins != c.intercept {
				t.Fatalf("mcp_proxy %+v", m)
			}
			if len(wf.Warnings) != 0 {
				t.Fatalf("warnings: %v", wf.Warnings)
			}
		})
	}
	// Whether a plugin has the operations is the plugin host's to say
	// (plugin.Host.CheckWorkflow): the block loads as written.
	wf, err := Parse(proxyStep("claude", "      enable: true\n      intercept_builtins: false\n      plugin_tools:\n        - plugin: kubernetes\n          expose: [kubectl_apply, get]\n", ""), "f.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := wf.States["a"].MCPProxy
	if len(m.PluginTools) != 1 || m.PluginTools[0].Plugin != "kubernetes" || strings.Join(m.PluginTools[0].Expose, ",") != "kubectl_apply,get" || m.PluginTools[0].Pos.Line != 12 {
		t.Fatalf("plugin_tools %+v", m.PluginTools)
	}
}

// What AWF refuses (USER.MCP_PROXY.*), reel refuses at the line.
func TestMCPProxyProblems(t *testing.T) {
	for _, c := range []struct{ block, want string }{
		{"      enable: true\n      policy: bogus\n", `f.yaml:10:7: unknown field "policy" in mcp_proxy`},
		{"      enable: true\n      intercept_builtin: true\n", `unknown field "intercept_builtin" in mcp_proxy (did you mean "intercept_builtins"?)`},
		{"      enable: yes please\n", `f.yaml:9:15: mcp_proxy.enable must be true or false`},
		{"      enable: true\n      intercept_builtins: false\n", `f.yaml:9:7: mcp_proxy: enabled with intercept_builtins false and no plugin_tools, the proxy would serve nothing`},
		{"      enable: true\n      plugin_tools:\n        - plugin: k\n          expose: [a]\n        - plugin: k\n          expose: [b]\n",
			`f.yaml:13:11: mcp_proxy.plugin_tools: plugin "k" is listed twice`},
		{"      enable: true\n      plugin_tools:\n        - plugin: k\n          expose: [a, a]\n", `mcp_proxy.plugin_tools: tool k_a is served twice`},
		{"      enable: true\n      plugin_tools:\n        - plugin: k\n", `f.yaml:11:11: mcp_proxy.plugin_tools[0] needs expose`},
		{"      enable: true\n      plugin_tools:\n        - plugin: k\n          expose: [a]\n          mode: x\n", `unknown field "mode" in mcp_proxy.plugin_tools[0]`},
		{"      enable: true\n      plugin_tools: k\n", `mcp_proxy.plugin_tools must be a list`},
		{"      - enable\n", `f.yaml:9:7: mcp_proxy must be a mapping, got a list`},
	} {
		_, err := Parse(proxyStep("claude", c.block, ""), "f.yaml", Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.block, err, c.want)
		}
	}
}

// AWF warns where a CLI keeps its own tools beside the proxy's; reel
// says so at validate and run time, and also where the block does nothing.
func TestMCPProxyWarnings(t *testing.T) {
	for _, c := range []struct{ provider, block, extra, want string }{
		{"codex", "      enable: true\n", "", "f.yaml:9:7: warning: mcp_proxy on provider codex runs in coexistence mode"},
		{"opencode", "      enable: true\n", "", "mcp_proxy on provider opencode runs in coexistence mode"},
		{"github_copilot", "      enable: true\n", "", "mcp_proxy on provider github_copilot runs in coexistence mode"},
		{"mistral_vibe", "      enable: true\n", "", "vibe refuses MCP tool calls in a non-interactive run unless options.agent_profile is auto-approve and options.trust is true"},
	} {
		wf, err := Parse(proxyStep(c.provider, c.block, c.extra), "f.yaml", Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.provider, err)
		}
		if len(wf.Warnings) != 1 || !strings.Contains(wf.Warnings[0].String(), c.want) {
			t.Errorf("%s: warnings %v, want %s", c.provider, wf.Warnings, c.want)
		}
	}
	for _, quiet := range []struct{ provider, block, extra string }{
		{"claude", "      enable: true\n", ""},
		{"codex", "      enable: false\n", ""},
		{"mistral_vibe", "      enable: true\n", "    options:\n      agent_profile: auto-approve\n      trust: true\n"},
		{"openai_compatible", "      enable: true\n", "    options:\n      model: m\n"},
	} {
		wf, err := Parse(proxyStep(quiet.provider, quiet.block, quiet.extra), "f.yaml", Options{})
		if err != nil || len(wf.Warnings) != 0 {
			t.Errorf("%s %q: %v, warnings %v", quiet.provider, quiet.block, err, wf.Warnings)
		}
	}
	src := "name: x\nstates:\n  initial: s\n  s:\n    type: step\n    command: true\n    mcp_proxy: {enable: true}\n    on_success: done\n  done:\n    type: terminal\n"
	wf, err := Parse([]byte(src), "f.yaml", Options{})
	if err != nil || len(wf.Warnings) != 1 || !strings.Contains(wf.Warnings[0].String(), "f.yaml:7:16: warning: mcp_proxy is ignored on a step state") {
		t.Errorf("step with mcp_proxy: %v, %v", err, wf.Warnings)
	}
}
