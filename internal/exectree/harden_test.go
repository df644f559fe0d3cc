package exectree

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
)

// A file of step.started lines that never complete, all open at once:
// the tree stops at MaxNodes and says so, and reading it takes time in
// proportion to the file (no scan of every open step per line).
func TestManyOpenStepsAreBoundedAndLinear(t *testing.T) {
	id := transcript.NewRunID()
	p := filepath.Join(t.TempDir(), id+".jsonl")
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"seq":1,"run_id":%q,"type":"run.started","path":"","iteration":0,"timestamp":"2026-01-01T00:00:00.000000Z","payload":{"name":"w","kind":"workflow"}}`+"\n", id)
	const n = 200_000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"seq":%d,"run_id":%q,"type":"step.started","path":"a.b","iteration":%d,"timestamp":"2026-01-01T00:00:00.000000Z","payload":{"name":"b","kind":"command"}}`+"\n", i+2, id, i)
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"seq":%d,"run_id":%q,"type":"message.user","path":"a.b","iteration":%d,"timestamp":"2026-01-01T00:00:00.000000Z","payload":{"role":"user","blocks":[{"type":"text","text":"x","fidelity":"router"}]}}`+"\n", i+2, id, n+i)
		}
	}
	os.WriteFile(p, b.Bytes(), 0o600)
	start := time.Now()
	tree, err := Build(runs.Open(p, runs.Options{}), Options{MaxNodes: 50_000})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	// Linear, measured against decoding every line once in the same run
	// (a wall-clock bound fails on a loaded machine or under -race): a
	// scan of every open step per line would be thousands of times that.
	start = time.Now()
	for _, line := range bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
		if _, err := transcript.DecodeEvent(line); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Since(start)
	ratio := float64(took) / float64(base)
	t.Logf("Build %s, decoding every line %s: %.1fx", took, base, ratio)
	if ratio > 30 {
		t.Fatalf("Build took %s, %.0f times decoding every line (%s)", took, ratio, base)
	}
	nodes := 0
	Walk(tree.Root, func(*Node, int) { nodes++ })
	if nodes > 50_001 {
		t.Fatalf("%d nodes", nodes)
	}
	if w := strings.Join(tree.Warnings, "\n"); !strings.Contains(w, "150000 more are not shown") {
		t.Fatalf("warnings:\n%s", w)
	}
}

func TestEmptyTranscriptIsAnError(t *testing.T) {
	p := filepath.Join(t.TempDir(), transcript.NewRunID()+".jsonl")
	os.WriteFile(p, nil, 0o600)
	if _, err := Build(runs.Open(p, runs.Options{}), Options{}); !errors.Is(err, transcript.ErrEmpty) {
		t.Fatalf("Build = %v, want ErrEmpty", err)
	}
}

// A node fits the collector's small size classes (see Node).
func TestNodeFitsASmallSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(Node{}); n > 512 {
		t.Fatalf("Node is %d bytes, over 512", n)
	}
}
