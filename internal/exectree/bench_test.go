package exectree

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
)

// stdlibScan is the baseline: decode every line with encoding/json, as a
// tree builder without a fast path would.
func stdlibScan(path string) (int, error) {
	steps := 0
	err := transcripttest.StdlibLines(path, func(line []byte) error {
		var ev struct {
			Type      string          `json:"type"`
			Path      string          `json:"path"`
			Iteration int             `json:"iteration"`
			Timestamp time.Time       `json:"timestamp"`
			Payload   json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return err
		}
		var p map[string]any
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			return err
		}
		if ev.Type == "step.completed" {
			steps++
		}
		return nil
	})
	return steps, err
}

func BenchmarkBuild(b *testing.B) {
	path := transcripttest.WriteLoopRun(b, b.TempDir(), 20000) // 100k events
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	benchratio.Run(b, func() {
		tree, err := Build(runs.Open(path, runs.Options{}), Options{})
		if err != nil || len(tree.Root.Children[0].Children) != 20000 {
			b.Fatalf("build: %v", err)
		}
	}, func() {
		if _, err := stdlibScan(path); err != nil {
			b.Fatal(err)
		}
	})
}
