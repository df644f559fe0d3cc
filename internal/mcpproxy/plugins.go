package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/tools"
)

// PluginTools names operations of one plugin to serve (an entry of
// mcp_proxy's plugin_tools).
type PluginTools struct {
	Plugin string
	Expose []string
}

// OperationTools returns the tools the plugin operations of list are
// served as, in list's order: tool <plugin>_<operation>, described as AWF
// describes it (the operation's description, else a sentence naming it,
// then the fields of its result) with the operation's input schema. A
// call runs the operation through host (the plugin started on first
// need): its inputs are checked against the schema first, and an
// operation the plugin reports failed answers the model with its error
// beside the outputs it gave. Every plugin and operation must exist: a
// step does not start with half of the tools its workflow names.
func OperationTools(ctx context.Context, host *plugin.Host, list []PluginTools) ([]tools.Tool, error) {
	var out []tools.Tool
	for _, pt := range list {
		if host == nil {
			return nil, fmt.Errorf("mcp proxy: plugin_tools: plugin %s: no plugins are installed", pt.Plugin)
		}
		for _, name := range pt.Expose {
			if err := checkToolName(pt.Plugin + "_" + name); err != nil {
				return nil, fmt.Errorf("mcp proxy: plugin_tools: %s.%s: %w", pt.Plugin, name, err)
			}
			op, err := host.Operation(ctx, pt.Plugin+"."+name)
			if err != nil {
				return nil, fmt.Errorf("mcp proxy: plugin_tools: %w", err)
			}
			out = append(out, operationTool(host, op))
		}
	}
	return out, nil
}

func operationTool(host *plugin.Host, op plugin.Operation) tools.Tool {
	desc := op.Description
	if desc == "" {
		desc = fmt.Sprintf("Operation '%s' from plugin '%s'.", op.Name, op.Plugin)
	}
	if len(op.Outputs) > 0 {
		fields := make([]string, len(op.Outputs))
		for i, o := range op.Outputs {
			fields[i] = o.Name
		}
		desc += " Returns a JSON object with fields: " + strings.Join(fields, ", ") + "."
	}
	qualified := op.QualifiedName()
	return tools.Tool{
		Definition: tools.Definition{Name: op.Plugin + "_" + op.Name, Description: desc, Parameters: op.InputSchema()},
		Run: func(ctx context.Context, input json.RawMessage) (any, error) {
			var args map[string]any
			if len(input) > 0 {
				if err := json.Unmarshal(input, &args); err != nil {
					return nil, fmt.Errorf("%s: invalid arguments: %v", qualified, err)
				}
			}
			res, err := host.Operate(ctx, qualified, args)
			if err != nil {
				return nil, err
			}
			var outputs any
			if len(res.Outputs) > 0 {
				outputs = res.Outputs
			}
			if !res.Success {
				return outputs, fmt.Errorf("%s: %s", qualified, res.Error)
			}
			if outputs == nil {
				outputs = map[string]any{}
			}
			return outputs, nil
		},
	}
}

// checkToolName refuses a tool name the agents' model APIs would refuse
// (Anthropic's and OpenAI's tool names are [A-Za-z0-9_-], 64 at most,
// and the CLIs prefix the server's name), before the agent starts rather
// than on its first turn.
func checkToolName(name string) error {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Errorf("tool name %q: only letters, digits, _ and - can be served to an agent", name)
		}
	}
	if len(name) > maxToolName {
		return fmt.Errorf("tool name %q is longer than %d characters (the agent's CLI adds mcp__%s__)", name, maxToolName, ServerName)
	}
	return nil
}

// maxToolName leaves room in the model APIs' 64 characters for the
// longest prefix a CLI gives an MCP tool (claude's and codex's
// mcp__reel__).
const maxToolName = 64 - len("mcp__"+ServerName+"__")
