package pricing

import (
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// BenchmarkCost prices agent steps that reported no cost, as reel stats
// and the OTLP export do for every such step, model ids in the forms
// transcripts hold (dated, provider-prefixed, Bedrock). The baseline is
// the least a price lookup costs: lower-case the id, look it up in a map
// and multiply.
func BenchmarkCost(b *testing.B) {
	tab := Default()
	models := []string{"claude-sonnet-4-5-20250929", "anthropic/claude-haiku-4-5", "us.anthropic.claude-opus-4-1-20250805-v1:0", "gpt-5.1-codex", "models/gemini-2.5-pro", "gpt-4o-2024-08-06"}
	steps := make([]transcript.AgentResult, len(models))
	for i, m := range models {
		steps[i] = transcript.AgentResult{Model: m, Usage: transcript.Usage{InputTokens: 12000, OutputTokens: 800, CacheReadTokens: 9000, CacheWriteTokens: 1000}}
	}
	base := map[string]Price{}
	for _, p := range tab.Models {
		base[p.Model] = p
	}
	var ours, std time.Duration
	var sink float64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ar := &steps[i%len(steps)]
		t0 := time.Now()
		c := tab.Step(ar)
		t1 := time.Now()
		if !c.Known {
			b.Fatalf("%s: no price", ar.Model)
		}
		p := base[strings.ToLower(ar.Model)]
		sink += c.USD + (float64(ar.Usage.InputTokens)*p.Input+float64(ar.Usage.OutputTokens)*p.Output)/1e6
		std += time.Since(t1)
		ours += t1.Sub(t0)
	}
	b.StopTimer()
	_ = sink
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "reel-ns/step")
	b.ReportMetric(float64(std)/float64(ours), "x-vs-stdlib")
}
