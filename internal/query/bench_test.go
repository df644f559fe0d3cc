package query

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/benchratio"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// benchTranscripts writes n transcripts of about size bytes each, made of
// the shared benchmark mix with seq 1..N, and returns their paths.
func benchTranscripts(b *testing.B, n int, size int) []string {
	b.Helper()
	mix, err := transcript.ReadFile(filepath.Join(testfixtures.Root(b), "bench", "mix.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	paths := make([]string, n)
	epoch := time.Date(2026, 6, 8, 8, 0, 0, 0, time.UTC)
	var line []byte
	for i := range paths {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		paths[i] = filepath.Join(dir, id+".jsonl")
		var buf bytes.Buffer
		seq := uint64(0)
		for buf.Len() < size {
			for _, e := range mix {
				seq++
				e.Seq, e.RunID, e.Timestamp = seq, id, epoch.Add(time.Duration(seq)*time.Millisecond)
				line, err = transcript.AppendEvent(line[:0], &e)
				if err != nil {
					b.Fatal(err)
				}
				buf.Write(line)
				buf.WriteByte('\n')
			}
		}
		if err := os.WriteFile(paths[i], buf.Bytes(), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return paths
}

// stdlibEvents is the baseline: what a program using only the standard
// library does for `--type tool.result --field payload.name`.
func stdlibEvents(w io.Writer, path string) error {
	bw := bufio.NewWriter(w)
	err := transcripttest.StdlibLines(path, func(line []byte) error {
		var ev struct {
			Type    string `json:"type"`
			Payload struct {
				Name string `json:"name"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return err
		}
		if ev.Type == "tool.result" {
			bw.WriteString(ev.Payload.Name)
			bw.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

func BenchmarkEventsField(b *testing.B) {
	paths := benchTranscripts(b, 1, 16<<20)
	st, _ := os.Stat(paths[0])
	f := Filter{Types: []transcript.EventType{transcript.ToolResult}}
	p := Projection{Fields: []string{"payload.name"}}
	b.SetBytes(st.Size())
	benchratio.Run(b, func() {
		if _, err := Events(context.Background(), io.Discard, open(nil, paths...), f, p); err != nil {
			b.Fatal(err)
		}
	}, func() {
		if err := stdlibEvents(io.Discard, paths[0]); err != nil {
			b.Fatal(err)
		}
	})
}

// stdlibStats is the baseline for stats: decode every line with
// encoding/json and add up the agent usage of step.completed events.
func stdlibStats(paths []string) (int64, error) {
	var total int64
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev struct {
				Type    string `json:"type"`
				Payload struct {
					Name   string                  `json:"name"`
					Result *transcript.AgentResult `json:"result"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				f.Close()
				return 0, err
			}
			if ev.Type == "step.completed" && ev.Payload.Result != nil {
				total += ev.Payload.Result.Usage.InputTokens
			}
		}
		f.Close()
	}
	return total, nil
}

func BenchmarkStats(b *testing.B) {
	paths := benchTranscripts(b, 50, 256<<10)
	var size int64
	for _, p := range paths {
		st, _ := os.Stat(p)
		size += st.Size()
	}
	b.SetBytes(size)
	benchratio.Run(b, func() {
		if _, err := Stats(context.Background(), open(nil, paths...), pricing.Default()); err != nil {
			b.Fatal(err)
		}
	}, func() {
		if _, err := stdlibStats(paths); err != nil {
			b.Fatal(err)
		}
	})
}
