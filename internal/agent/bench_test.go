package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// benchRecording writes a claude stream of turns tool round trips (about
// 1 KiB per turn) and returns its path and size.
func benchRecording(b *testing.B, turns int) (string, int64) {
	b.Helper()
	var buf bytes.Buffer
	buf.WriteString(`{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-5"}` + "\n")
	for i := range turns {
		fmt.Fprintf(&buf, `{"type":"assistant","message":{"id":"msg_%d","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Step %d: reading the next file to check the handler and its tests."},{"type":"tool_use","id":"toolu_%d","name":"Read","input":{"file_path":"internal/pkg/file_%d.go"}}],"usage":{"input_tokens":100,"output_tokens":20}},"session_id":"s"}`+"\n", i, i, i, i)
		fmt.Fprintf(&buf, `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":"package pkg\n\nfunc Handler%d() error {\n\treturn nil\n}\n","is_error":false}]},"session_id":"s"}`+"\n", i, i)
	}
	buf.WriteString(`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done","session_id":"s","usage":{"input_tokens":1,"output_tokens":1}}` + "\n")
	p := filepath.Join(b.TempDir(), "bench.jsonl")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return p, int64(buf.Len())
}

// BenchmarkCLIReplay runs a claude step through the real subprocess path
// (fake-agent.sh replaying ~2 MB) beside a plain standard-library baseline
// that runs the same script and decodes each line with encoding/json.
func BenchmarkCLIReplay(b *testing.B) {
	file, size := benchRecording(b, 2000)
	bin, _ := filepath.Abs(filepath.Join("testdata", "fake-agent.sh"))
	env := baseEnv("REEL_FAKE_AGENT_REPLAY=" + file)
	req := Request{Provider: "claude", Prompt: "p", Options: map[string]any{"command": bin}, Dir: b.TempDir(), Env: env}
	b.Logf("recording: %d bytes", size)
	var reel, base time.Duration
	events := 0
	for b.Loop() {
		start := time.Now()
		if _, err := Run(context.Background(), req, func(transcript.ExchangeEvent) error { events++; return nil }); err != nil {
			b.Fatal(err)
		}
		reel += time.Since(start)

		start = time.Now()
		cmd := exec.Command(bin)
		cmd.Env = env
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			var v map[string]any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				b.Fatal(err)
			}
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		base += time.Since(start)
	}
	if events == 0 {
		b.Fatal("no events")
	}
	b.ReportMetric(float64(reel)/float64(base), "x-vs-stdlib")
	b.ReportMetric(float64(reel.Nanoseconds())/float64(b.N), "reel-ns/op")
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "stdlib-ns/op")
}
