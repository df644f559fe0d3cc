package query

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/reelhq/reel/internal/exectree"
	"github.com/reelhq/reel/internal/pricing"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/textview"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/internal/verify"
	"github.com/reelhq/reel/transcript"
)

// maxWarnings bounds what a reader may report about one file of any
// content: 64 kinds of 10 messages and a count each, at most.
const maxWarnings = 64 * 11

// FuzzReaders feeds arbitrary transcript bytes to every reader: none may
// panic, each must still answer (with warnings) for what it could read,
// and the warnings stay bounded.
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
	f.Add(bytes.Repeat([]byte("{}\n"), 5000))
	f.Add([]byte(""))
	// One file, rewritten per input: a temporary directory per input
	// slows the fuzzer to a crawl.
	work := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(work, transcripttest.RootID+".jsonl")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		// An empty file is an error for the readers of one run; anything
		// else is read, with warnings, and the warnings are bounded
		// whatever the input (summarised past a few of each kind).
		empty := len(data) == 0
		bounded := func(what string, n int) {
			if n > maxWarnings {
				t.Fatalf("%s: %d warnings", what, n)
			}
		}
		tree, err := exectree.Build(runs.Open(p, runs.Options{}), exectree.Options{})
		if empty {
			if !errors.Is(err, transcript.ErrEmpty) {
				t.Fatalf("Build of an empty file: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		bounded("Build", len(tree.Warnings))
		exectree.Render(io.Discard, tree)
		d := Compare(tree, tree)
		bounded("Compare", len(d.Warnings))
		RenderDiff(io.Discard, d)
		pairs, warns, err := Tools(runs.Open(p, runs.Options{}))
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		bounded("Tools", len(warns))
		RenderTools(io.Discard, pairs)
		rep, err := Stats(context.Background(), []*runs.Run{runs.Open(p, runs.Options{})}, pricing.Default())
		if err != nil {
			t.Fatalf("Stats: %v", err)
		}
		bounded("Stats", len(rep.Warnings))
		RenderStats(io.Discard, rep)
		vr := verify.Paths([]string{p}, verify.Options{})
		bounded("verify", len(vr.Problems))
		rw, err := textview.Replay(context.Background(), io.Discard, runs.Open(p, runs.Options{}), textview.Options{})
		if err != nil {
			t.Fatalf("Replay: %v", err)
		}
		bounded("Replay", len(rw))
		flt := Filter{Types: []transcript.EventType{transcript.ToolResult, transcript.StepStarted}, PathGlob: "*", Since: transcripttest.Epoch}
		if _, err := Events(context.Background(), io.Discard, []*runs.Run{runs.Open(p, runs.Options{})}, flt, Projection{Fields: []string{"payload.name", "payload.blocks.0"}}); err != nil {
			t.Fatalf("Events: %v", err)
		}
		flt.Fidelity = transcript.FidelityRouter
		Events(context.Background(), io.Discard, []*runs.Run{runs.Open(p, runs.Options{})}, flt, Projection{JSON: true, Fields: []string{"seq", "payload"}})
	})
}
