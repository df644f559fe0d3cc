package flowstudio

import (
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkParseLine parses the three line shapes beside decoding them
// into map[string]any with encoding/json.
func BenchmarkParseLine(b *testing.B) {
	lines := [][]byte{
		[]byte(`{"timestamp": "2025-12-09T09:38:51.060335+00:00Z", "role": "user", "content": "Step role: Apply targeted fixes from critics and mutations \u2192 fix_summary.md."}`),
		[]byte(`{"timestamp": "2025-12-09T14:30:27.234567Z", "role": "tool", "tool_name": "Write", "tool_input": {"file_path": "/path/to/new.py", "content": "..."}, "tool_output": "File written successfully"}`),
		[]byte(`{"timestamp": "2025-12-09T10:20:45Z", "type": "result", "usage": {"prompt": 12, "completion": 3, "total": 15}}`),
		[]byte(`{"timestamp":"2025-12-09T10:20:46Z","type":"assistant","message":{"model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"a"}}]}}`),
	}
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var ours, base time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		for _, l := range lines {
			if _, err := ParseLine(l); err != nil {
				b.Fatal(err)
			}
		}
		ours += time.Since(t0)
		t1 := time.Now()
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal(l, &m); err != nil {
				b.Fatal(err)
			}
		}
		base += time.Since(t1)
	}
	b.ReportMetric(float64(ours)/float64(base), "x-vs-stdlib")
}
