// Command faulty is a test plugin that misbehaves on demand: operation
// crash kills the process mid-call, hang never answers, ok answers.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
	"github.com/reelhq/reel/internal/plugin/testdata/plugins/kit"
)

func main() {
	kit.Serve(&kit.Plugin{
		Name: "faulty",
		Operations: []kit.Operation{
			{Schema: &pluginv1.OperationSchema{Name: "crash"}, Run: func(context.Context, map[string]any) (string, map[string]any, error) {
				fmt.Fprintln(os.Stderr, "faulty: about to fall over")
				go func() { panic("faulty: boom") }()
				select {}
			}},
			{Schema: &pluginv1.OperationSchema{Name: "hang"}, Run: func(context.Context, map[string]any) (string, map[string]any, error) {
				select {}
			}},
			{Schema: &pluginv1.OperationSchema{Name: "ok"}, Run: func(context.Context, map[string]any) (string, map[string]any, error) {
				return "fine", nil, nil
			}},
		},
	})
}
