// Command steps is a test step-type plugin: greet (config name), exit
// (config code, the exit code to answer) and inputs (the workflow inputs
// it was given, as JSON).
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reelhq/reel/internal/plugin/testdata/plugins/kit"
)

func main() {
	kit.Serve(&kit.Plugin{
		Name: "steps",
		StepTypes: []kit.StepType{
			{Name: "greet", Run: func(_ context.Context, step string, cfg, _ map[string]any) (string, map[string]any, int32, error) {
				name := fmt.Sprint(cfg["name"])
				return "hello " + name, map[string]any{"name": name, "state": step}, 0, nil
			}},
			{Name: "exit", Run: func(_ context.Context, _ string, cfg, _ map[string]any) (string, map[string]any, int32, error) {
				code, _ := cfg["code"].(float64)
				return fmt.Sprintf("exiting %d", int(code)), nil, int32(code), nil
			}},
			{Name: "inputs", Run: func(_ context.Context, _ string, _, in map[string]any) (string, map[string]any, int32, error) {
				b, _ := json.Marshal(in)
				return string(b), in, 0, nil
			}},
		},
	})
}
