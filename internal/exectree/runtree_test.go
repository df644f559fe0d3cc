package exectree

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

func TestSampleTree(t *testing.T) {
	path := transcripttest.Sample(t, transcripttest.Variant{})
	tree, err := Build(runs.Open(path, runs.Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Warnings) != 0 {
		t.Errorf("warnings: %v", tree.Warnings)
	}
	var buf bytes.Buffer
	if err := Render(&buf, tree); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "sample.txt"), buf.Bytes())
	js, err := json.MarshalIndent(tree, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "sample.json"), append(js, '\n'))

	// Exactness: the executions the sample recorded, by path.
	counts := map[string]int{}
	Walk(tree.Root, func(n *Node, _ int) {
		if n.Kind != KindIteration {
			counts[n.Path]++
		}
	})
	want := map[string]int{
		"": 2, "analyze": 1, "setup": 2, "each_file": 1, "each_file.review": 2, "each_file.fmt": 2,
		"outer": 1, "outer.inner": 2, "outer.inner.check": 3, "build_all": 1, "build_all.lint": 1,
		"build_all.test": 1, "fix": 1, "patch": 1, "verify": 1,
	}
	for p, n := range want {
		if counts[p] != n {
			t.Errorf("executions of %q = %d, want %d", p, counts[p], n)
		}
	}
	root := tree.Root
	if root.Status != StatusSuccess || root.Name != "review-flow" || root.RunID != transcripttest.RootID {
		t.Errorf("root = %+v", root)
	}
	if root.Usage.InputTokens != 2810 || root.Usage.OutputTokens != 580 {
		t.Errorf("root usage = %+v", root.Usage)
	}
	// Nested loops stay apart: outer iteration 0 holds two checks, 1 holds one.
	outer := find(root, "outer")
	if len(outer.Children) != 2 {
		t.Fatalf("outer iterations = %d", len(outer.Children))
	}
	for i, n := range []int{2, 1} {
		inner := outer.Children[i].Children[0]
		if inner.Path != "outer.inner" || len(inner.Children) != n {
			t.Errorf("outer[%d] inner = %s with %d iterations, want %d", i, inner.Path, len(inner.Children), n)
		}
	}
	setup := children(root, "setup")
	if setup[0].Status != StatusFailure || setup[0].Attempt != 1 || setup[1].Status != StatusSuccess || setup[1].Attempt != 2 {
		t.Errorf("retry attempts not separate: %+v %+v", setup[0], setup[1])
	}
	fix := find(root, "fix")
	if len(fix.Children) != 1 || fix.Children[0].RunID != transcripttest.ChildID || fix.Children[0].Usage.InputTokens != 800 {
		t.Errorf("sub-workflow not nested: %+v", fix.Children)
	}
	rev1 := find(root, "each_file").Children[1].Children[0]
	if rev1.Tools != 2 || rev1.Dangling != 1 {
		t.Errorf("review[1] tools %d dangling %d", rev1.Tools, rev1.Dangling)
	}
}

func find(n *Node, path string) *Node {
	var got *Node
	Walk(n, func(c *Node, _ int) {
		if got == nil && c.Path == path && c.Kind != KindIteration {
			got = c
		}
	})
	return got
}

func children(n *Node, path string) []*Node {
	var got []*Node
	for _, c := range n.Children {
		if c.Path == path {
			got = append(got, c)
		}
	}
	return got
}

func TestInterrupted(t *testing.T) {
	path := transcripttest.Sample(t, transcripttest.Variant{Interrupted: true})
	tree, err := Build(runs.Open(path, runs.Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	Render(&buf, tree)
	golden.Check(t, filepath.Join("testdata", "interrupted.txt"), buf.Bytes())
	if tree.Root.Status != StatusInterrupted {
		t.Errorf("root status %s", tree.Root.Status)
	}
	if v := find(tree.Root, "verify"); v == nil || v.Status != StatusInterrupted {
		t.Errorf("open step = %+v", v)
	}
}

func TestDamaged(t *testing.T) {
	dir := t.TempDir()
	path := transcripttest.WriteSample(t, dir, transcripttest.Variant{})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	// Garbage in the middle, NUL bytes, and a torn tail.
	damaged := strings.Join(lines[:5], "") + "{not json\n\x00\x00\n" + strings.Join(lines[5:len(lines)-2], "") + lines[len(lines)-2][:40]
	bad := filepath.Join(dir, "damaged.jsonl")
	os.WriteFile(bad, []byte(damaged), 0o600)
	tree, err := Build(runs.Open(bad, runs.Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Warnings) != 3 {
		t.Errorf("warnings = %q, want 3", tree.Warnings)
	}
	if tree.Root.Status != StatusInterrupted || find(tree.Root, "fix") == nil {
		t.Errorf("what could be read was lost: %+v", tree.Root)
	}
	// A missing child transcript is a warning, not an error.
	os.Remove(filepath.Join(dir, transcripttest.ChildID+".jsonl"))
	tree, err = Build(runs.Open(path, runs.Options{}), Options{})
	if err != nil || len(tree.Warnings) != 1 || !strings.Contains(tree.Warnings[0], transcripttest.ChildID) {
		t.Errorf("missing child: err %v warnings %q", err, tree.Warnings)
	}
	if _, err := Build(runs.Open(filepath.Join(dir, "nope.jsonl"), runs.Options{}), Options{}); err == nil {
		t.Error("missing file: no error")
	}
}

// A child transcript naming its own parent as child must not recurse.
func TestCycle(t *testing.T) {
	dir := t.TempDir()
	a := transcripttest.NewRun(t, dir, transcripttest.RootID, "", transcripttest.Epoch)
	a.Event(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "loop", Kind: "workflow"}})
	a.Start("again", 0, transcript.KindCallWorkflow, 0)
	a.Event(transcript.ExchangeEvent{Type: transcript.CallWorkflowStarted, Path: "again", ChildRunID: transcripttest.RootID,
		Payload: &transcript.StepPayload{Name: "again", Kind: transcript.KindCallWorkflow}})
	a.Close()
	tree, err := Build(runs.Open(a.Recorder().Path(), runs.Options{}), Options{})
	if err != nil || len(tree.Warnings) != 1 || !strings.Contains(tree.Warnings[0], "cycle") {
		t.Fatalf("err %v warnings %q", err, tree.Warnings)
	}
}
