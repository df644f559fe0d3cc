// Package benchratio runs reel's implementation of a job and a plain
// standard-library baseline of the same job side by side in one benchmark
// and reports how many times faster reel's is. Every hot path's benchmark
// prints that ratio, so that a figure is always read against the same
// machine state rather than against a number from another day.
package benchratio

import (
	"encoding/json"
	"testing"
	"time"
)

// Run calls reel and then baseline once per iteration of b, timing each
// apart, and reports baseline's time over reel's as "x-vs-stdlib" (above
// 1, reel is faster). It returns reel's total time, for a benchmark that
// also reports a figure per item. Both functions fail b themselves.
func Run(b *testing.B, reel, baseline func()) time.Duration {
	var r, s time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		reel()
		t1 := time.Now()
		baseline()
		r += t1.Sub(t0)
		s += time.Since(t1)
	}
	b.ReportMetric(float64(s)/float64(r), "x-vs-stdlib")
	return r
}

// Envelope is a transcript line's envelope as a program using only
// encoding/json declares it: what the baselines decode a line into.
type Envelope struct {
	Seq         uint64          `json:"seq"`
	RunID       string          `json:"run_id"`
	ParentRunID string          `json:"parent_run_id,omitempty"`
	ChildRunID  string          `json:"child_run_id,omitempty"`
	Type        string          `json:"type"`
	Path        string          `json:"path"`
	Iteration   int             `json:"iteration"`
	Timestamp   time.Time       `json:"timestamp"`
	Payload     json.RawMessage `json:"payload"`
}
