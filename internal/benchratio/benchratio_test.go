package benchratio

import (
	"testing"
	"time"
)

// Run calls each side once per iteration and reports the baseline's time
// over reel's: a baseline that sleeps four times as long reads about 4.
func TestRunReportsTheRatio(t *testing.T) {
	var reel, base int
	var total time.Duration
	res := testing.Benchmark(func(b *testing.B) {
		reel, base = 0, 0
		total = Run(b,
			func() { reel++; time.Sleep(time.Millisecond) },
			func() { base++; time.Sleep(4 * time.Millisecond) })
	})
	if reel != res.N || base != res.N {
		t.Fatalf("%d iterations, reel called %d times, baseline %d", res.N, reel, base)
	}
	if total < time.Duration(res.N)*time.Millisecond {
		t.Errorf("reel's total %v for %d iterations of 1ms", total, res.N)
	}
	// Sleeps overrun under load, so only the order of magnitude holds.
	if r := res.Extra["x-vs-stdlib"]; r < 1.5 || r > 8 {
		t.Errorf("x-vs-stdlib = %v, want about 4", r)
	}
}
