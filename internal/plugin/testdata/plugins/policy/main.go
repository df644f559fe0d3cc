// Command policy is a test validator plugin: a command that deletes
// recursively from the root is an error, a command without a timeout a
// warning, a description with TODO an info, a workflow without a version a
// warning.
package main

import (
	"strings"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
	"github.com/reelhq/reel/internal/plugin/testdata/plugins/kit"
)

func main() {
	kit.Serve(&kit.Plugin{
		Name: "policy",
		Validate: func(def map[string]any, step string) []*pluginv1.ValidationIssue {
			if step == "" {
				if v, _ := def["version"].(string); v == "" {
					return []*pluginv1.ValidationIssue{{Severity: pluginv1.Severity_SEVERITY_WARNING, Message: "workflow has no version"}}
				}
				return nil
			}
			steps, _ := def["steps"].(map[string]any)
			s, _ := steps[step].(map[string]any)
			var out []*pluginv1.ValidationIssue
			cmd, _ := s["command"].(string)
			if strings.Contains(cmd, "rm -rf /") {
				out = append(out, &pluginv1.ValidationIssue{Severity: pluginv1.Severity_SEVERITY_ERROR, Message: "destructive command", Step: step, Field: "command"})
			}
			if s["type"] == "command" && s["timeout"] == nil {
				out = append(out, &pluginv1.ValidationIssue{Severity: pluginv1.Severity_SEVERITY_WARNING, Message: "command has no timeout", Step: step, Field: "timeout"})
			}
			if d, _ := s["description"].(string); strings.Contains(d, "TODO") {
				out = append(out, &pluginv1.ValidationIssue{Severity: pluginv1.Severity_SEVERITY_INFO, Message: "description has a TODO", Step: step, Field: "description"})
			}
			return out
		},
	})
}
