package transcript

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/internal/testfixtures"
)

// The benchmarks run a plain standard-library implementation of the same
// job beside reel's in the same benchmark and report the speed ratio as
// "x-vs-stdlib" (higher is better for reel).

type stdRecordEvent struct {
	Seq       uint64    `json:"seq"`
	RunID     string    `json:"run_id"`
	Type      string    `json:"type"`
	Path      string    `json:"path"`
	Iteration int       `json:"iteration"`
	Timestamp time.Time `json:"timestamp"`
	Payload   any       `json:"payload"`
}

func benchMix(b *testing.B) []ExchangeEvent {
	data, err := os.ReadFile(testfixtures.Bench(b, "mix.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	evs, err := ReadAll(bytes.NewReader(data))
	if err != nil || len(evs) != 4 {
		b.Fatalf("mix: %d events, %v", len(evs), err)
	}
	return evs
}

// stdlibRecorder is the baseline writer: json.Marshal and one write per
// event, under a mutex. The mutex covers the marshal too because seq is
// part of the line and must follow file order, the contract reel keeps.
type stdlibRecorder struct {
	mu  sync.Mutex
	f   *os.File
	seq uint64
}

func (s *stdlibRecorder) record(e *ExchangeEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	b, err := json.Marshal(stdRecordEvent{Seq: s.seq, RunID: e.RunID, Type: string(e.Type), Path: e.Path, Iteration: e.Iteration, Timestamp: time.Now().UTC(), Payload: e.Payload})
	if err != nil {
		panic(err)
	}
	s.f.Write(append(b, '\n'))
}

func openBaseline(b *testing.B) *stdlibRecorder {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "baseline.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	return &stdlibRecorder{f: f}
}

func runRecord(b *testing.B, producers int) {
	mix := benchMix(b)
	for i := range mix {
		mix[i].RunID = ""
	}
	n := b.N
	// Baseline first, same event count, same producers.
	base := openBaseline(b)
	baseStart := time.Now()
	parallel(producers, n, func(i int) { base.record(&mix[i%4]) })
	baseDur := time.Since(baseStart)
	base.f.Close()

	r, err := Create(b.TempDir(), NewRunID(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	parallel(producers, n, func(i int) {
		if _, err := r.Record(mix[i%4]); err != nil {
			b.Error(err)
		}
	})
	dur := time.Since(start)
	b.StopTimer()
	r.Close()
	b.ReportMetric(float64(baseDur.Nanoseconds())/float64(n), "stdlib-ns/op")
	b.ReportMetric(float64(baseDur)/float64(dur), "x-vs-stdlib")
}

func parallel(producers, n int, f func(i int)) {
	var wg sync.WaitGroup
	per := (n + producers - 1) / producers
	for p := 0; p < producers; p++ {
		lo, hi := p*per, min((p+1)*per, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// BenchmarkRecordSerial: one producer, every Record durable (write(2)
// returned) before the next.
func BenchmarkRecordSerial(b *testing.B) { runRecord(b, 1) }

// BenchmarkRecordParallel8: eight producers; group commit shares writes.
func BenchmarkRecordParallel8(b *testing.B) { runRecord(b, 8) }

// mixTranscript is the mix repeated to n events with seq 1..n.
func mixTranscript(b *testing.B, n int) []byte {
	mix := benchMix(b)
	var out []byte
	for i := 0; i < n; i++ {
		e := mix[i%4]
		e.Seq = uint64(i + 1)
		var err error
		if out, err = AppendEvent(out, &e); err != nil {
			b.Fatal(err)
		}
		out = append(out, '\n')
	}
	return out
}

// stdlibReadAll is the baseline reader: json.Decoder for the envelope, then
// a probe into map[string]any to choose the payload type, then a decode
// into it.
func stdlibReadAll(data []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	n := 0
	for dec.More() {
		var env benchratio.Envelope
		if err := dec.Decode(&env); err != nil {
			return n, err
		}
		var probe any
		if err := json.Unmarshal(env.Payload, &probe); err != nil {
			return n, err
		}
		var payload any
		switch p := probe.(type) {
		case []any:
			var blocks []ContentBlock
			json.Unmarshal(env.Payload, &blocks)
			payload = blocks
		case map[string]any:
			switch {
			case p["role"] != nil:
				var m MessagePayload
				json.Unmarshal(env.Payload, &m)
				payload = &m
			case p["call_id"] != nil:
				var t ToolPayload
				json.Unmarshal(env.Payload, &t)
				payload = &t
			case p["kind"] != nil:
				var s StepPayload
				json.Unmarshal(env.Payload, &s)
				payload = &s
			default:
				payload = probe
			}
		}
		_ = payload
		n++
	}
	return n, nil
}

// BenchmarkReadAll decodes a 40,000-event transcript per op.
func BenchmarkReadAll(b *testing.B) {
	const events = 40000
	data := mixTranscript(b, events)
	b.SetBytes(int64(len(data)))
	// Each side starts with a clean heap, so neither pays for the other's
	// garbage.
	runtime.GC()
	baseStart := time.Now()
	for i := 0; i < b.N; i++ {
		if n, err := stdlibReadAll(data); err != nil || n != events {
			b.Fatalf("baseline read %d: %v", n, err)
		}
	}
	baseDur := time.Since(baseStart)
	runtime.GC()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		evs, err := ReadAll(bytes.NewReader(data))
		if err != nil || len(evs) != events {
			b.Fatalf("read %d: %v", len(evs), err)
		}
	}
	dur := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(len(data))*float64(b.N)/baseDur.Seconds()/1e6, "stdlib-MB/s")
	b.ReportMetric(float64(baseDur)/float64(dur), "x-vs-stdlib")
}

// The two ceiling benchmarks measure what bounds BenchmarkRecordParallel8
// on a given machine (README, Performance): the cost of the work without
// durability, and the cost of waking eight producers per write alone.

// BenchmarkCeilingNoWait8: eight producers encode and queue lines that one
// background goroutine writes; nobody waits for the write.
func BenchmarkCeilingNoWait8(b *testing.B) {
	mix := benchMix(b)
	f, err := os.Create(filepath.Join(b.TempDir(), "nowait.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	var queue []byte
	kick := make(chan struct{}, 1)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var spare []byte
		for {
			select {
			case <-kick:
			case <-stop:
				f.Write(queue)
				return
			}
			mu.Lock()
			batch := queue
			queue = spare[:0]
			mu.Unlock()
			f.Write(batch)
			spare = batch
		}
	}()
	b.ResetTimer()
	parallel(8, b.N, func(i int) {
		e := mix[i%4]
		bp := bufPool.Get().(*[]byte)
		*bp, _ = appendEventBody((*bp)[:0], &e)
		mu.Lock()
		queue = append(queue, *bp...)
		mu.Unlock()
		bufPool.Put(bp)
		select {
		case kick <- struct{}{}:
		default:
		}
	})
	close(stop)
	<-stopped
}

// BenchmarkCeilingWake8: eight goroutines meet in groups of eight; the last
// to arrive closes the group's channel, waking the other seven. No encoding,
// no writing: the hand-off cost alone.
func BenchmarkCeilingWake8(b *testing.B) {
	var mu sync.Mutex
	group := make(chan struct{})
	arrived := 0
	b.ResetTimer()
	parallel(8, (b.N+7)/8*8, func(int) {
		mu.Lock()
		arrived++
		if arrived == 8 {
			close(group)
			group, arrived = make(chan struct{}), 0
			mu.Unlock()
			return
		}
		g := group
		mu.Unlock()
		<-g
	})
}
