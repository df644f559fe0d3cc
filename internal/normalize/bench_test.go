package normalize

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

// largestRollout returns the biggest shared recording: the full Codex
// rollout.
func largestRollout(b testing.TB) []byte {
	dir := testfixtures.Dir(b, string(CodexRollout))
	matches, _ := filepath.Glob(filepath.Join(dir, "rollout-*.jsonl"))
	if len(matches) == 0 {
		b.Skipf("no rollout-*.jsonl in %s", dir)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// importOnce normalizes data and encodes every event as the transcript
// writer would: the CPU side of `reel import`.
func importOnce(tb testing.TB, f Format, data []byte, buf *[]byte) int {
	n := 0
	p, err := NewParser(f, func(ev transcript.ExchangeEvent) error {
		ev.Seq, ev.RunID = uint64(n+1), goldenRunID
		var err error
		*buf, err = transcript.AppendEvent((*buf)[:0], &ev)
		n++
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := p.Write(data); err != nil {
		tb.Fatal(err)
	}
	if _, err := p.Close("end"); err != nil {
		tb.Fatal(err)
	}
	return n
}

// stdlibDecode is the baseline: every line into map[string]any with
// encoding/json.
func stdlibDecode(tb testing.TB, data []byte) int {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), MaxLineSize)
	n := 0
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			tb.Fatal(err)
		}
		n += len(m)
	}
	return n
}

// BenchmarkImportLargest measures `reel import`'s CPU path (normalize and
// encode every event) on the largest recording, MB/s, beside the stdlib
// baseline in the same run. The two alternate in blocks of iterations, so
// that load from other processes on a shared machine hits both alike while
// each block still pays for its own garbage collection, as a steady
// workload would; ns/op and MB/s are reel's alone.
func BenchmarkImportLargest(b *testing.B) {
	benchImport(b, CodexRollout, largestRollout(b))
}

// benchImport runs importOnce on data b.N times, alternating blocks with
// the stdlib baseline, and reports stdlib-MB/s and x-vs-stdlib.
func benchImport(b *testing.B, f Format, data []byte) {
	var buf []byte
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	const block = 16
	var reel, base time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(block, b.N-done)
		s := time.Now()
		for range n {
			importOnce(b, f, data, &buf)
		}
		reel += time.Since(s)
		b.StopTimer()
		s = time.Now()
		for range n {
			stdlibDecode(b, data)
		}
		base += time.Since(s)
		b.StartTimer()
		done += n
	}
	b.ReportMetric(float64(len(data))*float64(b.N)/base.Seconds()/1e6, "stdlib-MB/s")
	b.ReportMetric(float64(base)/float64(reel), "x-vs-stdlib")
}

// TestImportFasterThanStdlib keeps the benchmark's claim honest in a plain
// test run, with a margin for noisy machines.
func TestImportFasterThanStdlib(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing test: not under -short or -race")
	}
	data := largestRollout(t)
	var buf []byte
	best := func(f func()) time.Duration {
		min := time.Duration(1 << 62)
		for i := 0; i < 5; i++ {
			s := time.Now()
			f()
			if d := time.Since(s); d < min {
				min = d
			}
		}
		return min
	}
	reel := best(func() { importOnce(t, CodexRollout, data, &buf) })
	base := best(func() { stdlibDecode(t, data) })
	if ratio := float64(base) / float64(reel); ratio < 1.5 {
		t.Errorf("import is only %.2fx the speed of decoding into map[string]any", ratio)
	}
}

// BenchmarkImportFormats measures every normalizer on this package's own
// recordings of its format (each recording its own parser, as each step
// is), MB/s, beside a lenient stdlib baseline in the same run: what a
// change to one normalizer is measured by.
func BenchmarkImportFormats(b *testing.B) {
	for _, f := range Formats() {
		b.Run(string(f), func(b *testing.B) {
			var recs [][]byte
			size := 0
			for _, p := range ownRecordings(b, f) {
				d, err := os.ReadFile(p)
				if err != nil {
					b.Fatal(err)
				}
				recs = append(recs, d)
				size += len(d)
			}
			if len(recs) == 0 {
				b.Skipf("no recordings of %s", f)
			}
			var buf []byte
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var reel, base time.Duration
			b.ResetTimer()
			for done := 0; done < b.N; done++ {
				s := time.Now()
				for _, d := range recs {
					importOnce(b, f, d, &buf)
				}
				reel += time.Since(s)
				b.StopTimer()
				s = time.Now()
				for _, d := range recs {
					stdlibDecodeLenient(d)
				}
				base += time.Since(s)
				b.StartTimer()
			}
			b.ReportMetric(float64(base)/float64(reel), "x-vs-stdlib")
		})
	}
}

// stdlibDecodeLenient is the baseline for any format: a whole JSON document
// into one map, else each line (an SSE data payload stripped of its
// prefix) into map[string]any, lines that are not JSON passed over.
func stdlibDecodeLenient(data []byte) int {
	var v any
	if json.Unmarshal(data, &v) == nil {
		return 1
	}
	n := 0
	for line := range bytes.Lines(data) {
		line = bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:"))
		var m map[string]any
		if json.Unmarshal(line, &m) == nil {
			n += len(m)
		}
	}
	return n
}
