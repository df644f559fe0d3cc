// Command echo is a test plugin: operations echo (text, prefix, repeat),
// fail (a failure the plugin reports) and emit (an event sent through the
// host).
package main

import (
	"context"
	"errors"
	"strings"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
	"github.com/reelhq/reel/internal/plugin/testdata/plugins/kit"
)

func main() {
	var emit func(ctx context.Context, typ string, meta map[string]string) error
	kit.Serve(&kit.Plugin{
		Name: "echo",
		Host: func(e func(context.Context, string, map[string]string) error) { emit = e },
		Operations: []kit.Operation{
			{
				Schema: &pluginv1.OperationSchema{Name: "echo", Description: "Echo text, optionally prefixed.",
					Inputs: []*pluginv1.InputSchema{
						{Name: "text", Type: "string", Required: true, Description: "Text to echo."},
						{Name: "prefix", Type: "string", Description: "Prepended to the text."},
						{Name: "repeat", Type: "integer", Default: "1", Description: "How many times."},
						{Name: "loud", Type: "boolean"},
					},
					Outputs: []*pluginv1.OutputSchema{{Name: "output", Type: "string"}, {Name: "text", Type: "string"}}},
				Run: func(_ context.Context, in map[string]any) (string, map[string]any, error) {
					n := 1
					if r, ok := in["repeat"].(float64); ok {
						n = int(r)
					}
					out := strings.Repeat(kit.String(in, "prefix")+kit.String(in, "text"), n)
					if loud, _ := in["loud"].(bool); loud {
						out = strings.ToUpper(out)
					}
					return out, map[string]any{"text": kit.String(in, "text"), "repeat": n, "length": len(out)}, nil
				},
			},
			{
				Schema: &pluginv1.OperationSchema{Name: "fail", Inputs: []*pluginv1.InputSchema{{Name: "reason", Type: "string"}}},
				Run: func(_ context.Context, in map[string]any) (string, map[string]any, error) {
					return "", nil, errors.New("refused: " + kit.String(in, "reason"))
				},
			},
			{
				Schema: &pluginv1.OperationSchema{Name: "emit", Inputs: []*pluginv1.InputSchema{{Name: "type", Type: "string", Required: true}}},
				Run: func(ctx context.Context, in map[string]any) (string, map[string]any, error) {
					if emit == nil {
						return "", nil, errors.New("no host client")
					}
					if err := emit(ctx, kit.String(in, "type"), map[string]string{"from": "echo.emit"}); err != nil {
						return "", nil, err
					}
					return "emitted " + kit.String(in, "type"), nil, nil
				},
			},
		},
	})
}
