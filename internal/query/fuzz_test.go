package query

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runtree"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// FuzzReaders feeds arbitrary transcript bytes to every reader: none may
// panic, and each must still answer (with warnings) for what it could read.
// Each input goes through six readers and the file system, so minimizing
// a new input takes long on a busy machine; run with -fuzzminimizetime=200x
// to keep the fuzzer exploring.
func FuzzReaders(f *testing.F) {
	dir := f.TempDir()
	root := transcripttest.WriteSample(f, dir, transcripttest.Variant{})
	data, err := os.ReadFile(root)
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i := 0; i+3 <= len(lines); i += 7 {
		f.Add(bytes.Join(lines[i:i+3], nil))
	}
	f.Add([]byte("{\"seq\":1,\"type\":\"step.completed\",\"path\":\"a\",\"iteration\":-5,\"timestamp\":\"x\",\"payload\":{\"kind\":\"agent\",\"result\":[]}}\n"))
	f.Add([]byte("\x00\xff\n{\"type\":\"tool.result\"\n{{{{"))
	// One file, rewritten per input: a temporary directory per input
	// slows the fuzzer to a crawl.
	work := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(work, transcripttest.RootID+".jsonl")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		tree, err := runtree.Build(p, runtree.Options{})
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		runtree.Render(io.Discard, tree)
		RenderDiff(io.Discard, Compare(tree, tree))
		pairs, _, err := Tools(p, transcript.Limits{})
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		RenderTools(io.Discard, pairs)
		rep, err := Stats(context.Background(), []string{p}, transcript.Limits{}, pricing.Default())
		if err != nil {
			t.Fatalf("Stats: %v", err)
		}
		RenderStats(io.Discard, rep)
		flt := Filter{Types: []transcript.EventType{transcript.ToolResult, transcript.StepStarted}, PathGlob: "*", Since: transcripttest.Epoch}
		if _, err := Events(context.Background(), io.Discard, []string{p}, flt, Projection{Fields: []string{"payload.name", "payload.blocks.0"}}, transcript.Limits{}, func(string) {}); err != nil {
			t.Fatalf("Events: %v", err)
		}
		flt.Fidelity = transcript.FidelityRouter
		Events(context.Background(), io.Discard, []string{p}, flt, Projection{JSON: true, Fields: []string{"seq", "payload"}}, transcript.Limits{}, func(string) {})
	})
}
