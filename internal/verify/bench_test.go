package verify_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/internal/verify"
)

// stdlibCheck is the baseline: decode every line with encoding/json and
// check the seq order and step balance, the least a checker without
// reel's reader would do.
func stdlibCheck(path string) (int, error) {
	var seq uint64
	open := map[string]int{}
	bad := 0
	err := transcripttest.StdlibLines(path, func(line []byte) error {
		var ev struct {
			Type      string          `json:"type"`
			Seq       uint64          `json:"seq"`
			RunID     string          `json:"run_id"`
			Path      string          `json:"path"`
			Timestamp time.Time       `json:"timestamp"`
			Payload   json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return err
		}
		var p map[string]any
		if len(ev.Payload) > 0 {
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				return err
			}
		}
		seq++
		if ev.Seq != seq {
			bad++
		}
		switch ev.Type {
		case "step.started":
			open[ev.Path]++
		case "step.completed":
			open[ev.Path]--
		}
		return nil
	})
	return bad, err
}

func BenchmarkVerify(b *testing.B) {
	path := transcripttest.WriteLoopRun(b, b.TempDir(), 20000) // 100k events
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	benchratio.Run(b, func() {
		r := verify.Paths([]string{path}, verify.Options{SkipMode: true})
		if r.Violations() != 0 || len(r.Files) != 1 || !r.Files[0].Valid {
			b.Fatalf("verify: %v", r.Problems)
		}
	}, func() {
		if _, err := stdlibCheck(path); err != nil {
			b.Fatal(err)
		}
	})
}
