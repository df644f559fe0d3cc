package runs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/internal/rawjson"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

// benchFile writes a transcript of about size bytes made of the shared
// benchmark mix, seq 1..N.
func benchFile(b *testing.B, size int) (string, int) {
	b.Helper()
	var mix []transcript.ExchangeEvent
	for rec, err := range runs.Open(filepath.Join(testfixtures.Root(b), "bench", "mix.jsonl"), runs.Options{}).Events(runs.FullDecode) {
		if err != nil {
			b.Fatal(err)
		}
		mix = append(mix, *rec.Event())
	}
	var buf bytes.Buffer
	var line []byte
	n := 0
	epoch := time.Date(2026, 6, 8, 8, 0, 0, 0, time.UTC)
	for buf.Len() < size {
		for _, e := range mix {
			n++
			e.Seq, e.Timestamp = uint64(n), epoch.Add(time.Duration(n)*time.Millisecond)
			var err error
			if line, err = transcript.AppendEvent(line[:0], &e); err != nil {
				b.Fatal(err)
			}
			buf.Write(line)
			buf.WriteByte('\n')
		}
	}
	p := filepath.Join(b.TempDir(), "bench.jsonl")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	return p, n
}

// stdlibRead is the baseline of each mode: bufio.Scanner and
// encoding/json, decoding what the mode decodes (the type, the envelope,
// or the envelope and the payload in its own type).
func stdlibRead(path string, mode runs.Mode) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 256<<10), transcript.DefaultMaxLineSize)
	n := 0
	for sc.Scan() {
		switch mode {
		case runs.RawLines:
			var v struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				return n, err
			}
		default:
			var env benchratio.Envelope
			if err := json.Unmarshal(sc.Bytes(), &env); err != nil {
				return n, err
			}
			if mode == runs.FullDecode {
				var p any
				switch transcript.EventType(env.Type) {
				case transcript.MessageUser, transcript.MessageAssistant:
					p = &transcript.MessagePayload{}
				case transcript.ToolCall, transcript.ToolResult:
					p = &transcript.ToolPayload{}
				default:
					p = &transcript.StepPayload{}
				}
				if err := json.Unmarshal(env.Payload, p); err != nil {
					return n, err
				}
			}
		}
		n++
	}
	return n, sc.Err()
}

var typeFinder = rawjson.NewFinder("type")

// directRead is how the readers read before the run reader: the library's
// Reader, the type found in the raw line, the envelope or the event
// decoded from it.
func directRead(path string, mode runs.Mode) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rd := transcript.NewReader(f)
	var env runs.Envelope
	n := 0
	for {
		line, err := rd.NextLine()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if _, ok, err := typeFinder.String(line); !ok || err != nil {
			return n, fmt.Errorf("line %d: no type", rd.Line())
		}
		switch mode {
		case runs.EnvelopeOnly:
			if err := env.Parse(line); err != nil {
				return n, err
			}
		case runs.FullDecode:
			if _, err := rd.Decode(line); err != nil {
				return n, err
			}
		}
		n++
	}
}

// BenchmarkEvents reads a 40 MB transcript per op in each mode, beside the
// standard library doing the same work (x-vs-stdlib) and the library's
// Reader used directly, as the readers did before (x-vs-direct: 1 is no
// cost for the iterator and the damage policy).
func BenchmarkEvents(b *testing.B) {
	path, events := benchFile(b, 40<<20)
	st, _ := os.Stat(path)
	for _, mode := range []runs.Mode{runs.RawLines, runs.EnvelopeOnly, runs.FullDecode} {
		b.Run(fmt.Sprint([]string{"RawLines", "EnvelopeOnly", "FullDecode"}[mode]), func(b *testing.B) {
			b.SetBytes(st.Size())
			var reel, std, direct time.Duration
			for range b.N {
				t0 := time.Now()
				n := 0
				r := runs.Open(path, runs.Options{})
				for _, err := range r.Events(mode) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				t1 := time.Now()
				b.StopTimer()
				if n != events || r.Warnings().Len() > 0 {
					b.Fatalf("%d events of %d, warnings %q", n, events, r.Warnings().Strings())
				}
				if n, err := stdlibRead(path, mode); err != nil || n != events {
					b.Fatalf("stdlib: %d events, %v", n, err)
				}
				t2 := time.Now()
				if n, err := directRead(path, mode); err != nil || n != events {
					b.Fatalf("direct: %d events, %v", n, err)
				}
				reel += t1.Sub(t0)
				std += t2.Sub(t1)
				direct += time.Since(t2)
				b.StartTimer()
			}
			b.ReportMetric(float64(std)/float64(reel), "x-vs-stdlib")
			b.ReportMetric(float64(direct)/float64(reel), "x-vs-direct")
		})
	}
}
