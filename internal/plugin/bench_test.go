package plugin

import (
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/plugin/pluginv1"
)

// BenchmarkPublish measures what a run pays per lifecycle event with
// three subscribers: the metadata built, the event routed by pattern and
// queued for each, handled by a subscriber that returns at once. The
// baseline is the least a standard-library fan-out does: a prebuilt event
// sent on three buffered channels, each drained by a goroutine.
func BenchmarkPublish(b *testing.B) {
	h := &Host{warned: map[string]bool{}, log: &lineLog{}}
	h.bus = newBus(h.warn)
	var wg sync.WaitGroup
	deliver := func(*pluginv1.HandleEventRequest) ([]*pluginv1.HandleEventRequest, error) { wg.Done(); return nil, nil }
	for _, n := range []string{"a", "b", "c"} {
		h.bus.subscribe(n, []string{"workflow.*", "step.*"}, deliver)
	}
	ev := Lifecycle{Type: StepCompleted, RunID: "7f8e2a40-3b1c-4d2e-9f00-1a2b3c4d5e6f", Workflow: "bench", Step: "build", Path: "build", Kind: "step", Duration: time.Second}

	chans := make([]chan *pluginv1.HandleEventRequest, 3)
	for i := range chans {
		chans[i] = make(chan *pluginv1.HandleEventRequest, eventBuffer)
		go func(c chan *pluginv1.HandleEventRequest) {
			for range c {
				wg.Done()
			}
		}(chans[i])
	}
	pre := &pluginv1.HandleEventRequest{Type: StepCompleted, Metadata: ev.metadata()}
	var reel, std, send time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wg.Add(3)
		t0 := time.Now()
		h.Publish(ev)
		send += time.Since(t0)
		wg.Wait()
		t1 := time.Now()
		wg.Add(3)
		for _, c := range chans {
			select {
			case c <- pre:
			default:
				wg.Done()
			}
		}
		wg.Wait()
		reel += t1.Sub(t0)
		std += time.Since(t1)
	}
	b.StopTimer()
	for _, c := range chans {
		close(c)
	}
	h.bus.close(time.Second)
	b.ReportMetric(float64(reel.Nanoseconds())/float64(b.N), "ns/event")
	b.ReportMetric(float64(send.Nanoseconds())/float64(b.N), "ns/publish")
	b.ReportMetric(float64(reel)/float64(std), "x-stdlib")
}
