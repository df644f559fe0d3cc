package flowstudio

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/reelhq/reel/internal/golden"
	"github.com/reelhq/reel/internal/transcripttest"
	"github.com/reelhq/reel/transcript"
)

// sampleWithChild writes reel's sample run (its "fix" step is a
// call_workflow that starts a child run) and returns both runs' events.
func sampleWithChild(t testing.TB) (root, child []transcript.ExchangeEvent) {
	t.Helper()
	dir := t.TempDir()
	path := transcripttest.WriteSample(t, dir, transcripttest.Variant{})
	root, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	child, err = transcript.ReadFile(filepath.Join(dir, transcripttest.ChildID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return root, child
}

// exportSampleWithChild exports the sample run with its child into a
// directory and returns it.
func exportSampleWithChild(t *testing.T) (dir string, root, child []transcript.ExchangeEvent) {
	t.Helper()
	root, child = sampleWithChild(t)
	dir = filepath.Join(t.TempDir(), "run")
	if _, err := Export(dir, Run{Events: root, Children: map[string][]transcript.ExchangeEvent{transcripttest.ChildID: child}}); err != nil {
		t.Fatal(err)
	}
	return dir, root, child
}

// callEvents lists the call_workflow events with the event before each.
func callEvents(events []transcript.ExchangeEvent) []string {
	var out []string
	for i, e := range events {
		if e.Type == transcript.CallWorkflowStarted || e.Type == transcript.CallWorkflowCompleted {
			out = append(out, string(events[i-1].Type)+" "+events[i-1].Path+" > "+string(e.Type)+" "+e.Path+" "+e.ChildRunID+" "+e.Step().Name)
		}
	}
	return out
}

func TestImportRestoresChildRuns(t *testing.T) {
	dir, root, child := exportSampleWithChild(t)
	res, err := Import(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	if res.ReelRunID != transcripttest.RootID || len(res.Children) != 1 {
		t.Fatalf("reel run %q, %d children", res.ReelRunID, len(res.Children))
	}
	c := res.Children[0]
	if c.RunID != transcripttest.ChildID || c.ParentRunID != transcripttest.RootID {
		t.Errorf("child %s of %s", c.RunID, c.ParentRunID)
	}
	transcripttest.CheckValid(t, res.Events)
	transcripttest.CheckValid(t, c.Events)
	for _, e := range append(append([]transcript.ExchangeEvent{}, res.Events...), c.Events...) {
		if e.RunID != "" {
			t.Fatalf("event %s keeps run id %s", e.Type, e.RunID)
		}
	}
	// The call_workflow pair sits where the engine put it.
	if got, want := callEvents(res.Events), callEvents(root); !reflect.DeepEqual(got, want) {
		t.Errorf("call events:\n got %q\nwant %q", got, want)
	}
	// The child's exchange, paths and run boundaries are its own again.
	// (Flow Studio's tool lines keep the input on the call only.)
	want, have := transcripttest.Summarize(t, child, canonicalJSON), transcripttest.Summarize(t, c.Events, canonicalJSON)
	if !reflect.DeepEqual(want.Messages, have.Messages) || !reflect.DeepEqual(want.Tokens, have.Tokens) || len(want.Tools) != len(have.Tools) {
		t.Errorf("child exchange:\nwant %s\n got %s", want, have)
	}
	steps := func(evs []transcript.ExchangeEvent) (paths []string) {
		for _, e := range evs {
			if e.Type == transcript.StepStarted || e.Type == transcript.StepCompleted {
				paths = append(paths, string(e.Type)+" "+e.Path)
			}
		}
		return paths
	}
	if got, want := steps(c.Events), steps(child); !reflect.DeepEqual(got, want) {
		t.Errorf("child steps %v, want %v", got, want)
	}
	if first, last := c.Events[0], c.Events[len(c.Events)-1]; first.Step().Name != "fixer" || last.Type != transcript.RunCompleted {
		t.Errorf("child run from %s %+v to %s", first.Type, first.Payload, last.Type)
	}
	// The parent keeps only its own steps and exchange.
	for _, e := range res.Events {
		if strings.HasPrefix(e.Path, "fix.") {
			t.Errorf("parent keeps child event %s %s", e.Type, e.Path)
		}
	}
}

// TestGoldenExportChildren pins the spec.json that lists the child run.
func TestGoldenExportChildren(t *testing.T) {
	dir, _, _ := exportSampleWithChild(t)
	data, err := os.ReadFile(filepath.Join(dir, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "sample-children.spec.json"), data)
}

// TestImportBadChildListing: a reel_children listing that does not fit the
// run is reported, and the child's steps stay in the parent: nothing is
// lost and the run stays valid.
func TestImportBadChildListing(t *testing.T) {
	dir, _, _ := exportSampleWithChild(t)
	specPath := filepath.Join(dir, "spec.json")
	orig, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	flat, err := Import(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	total := len(flat.Events)
	for _, c := range flat.Children {
		total += len(c.Events)
	}
	cases := []struct {
		name, old, new, warning string
		children                int
	}{
		{"unknown parent", `"parent_run_id": "` + transcripttest.RootID, `"parent_run_id": "nobody`, "parent run", 0},
		{"child is root", `"run_id": "` + transcripttest.ChildID, `"run_id": "` + transcripttest.RootID, "missing or repeated", 0},
		{"no call step", `"call_path": "fix"`, `"call_path": "nowhere"`, "not in the parent run", 1},
		{"params not an object", `"params": {`, `"params": [], "x": {`, "params", 0},
		{"no root id", `"reel_run_id"`, `"other"`, "without reel_run_id", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Contains(orig, []byte(c.old)) {
				t.Fatalf("spec.json lacks %s", c.old)
			}
			if err := os.WriteFile(specPath, bytes.Replace(orig, []byte(c.old), []byte(c.new), 1), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Import(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(res.Warnings, "\n"), c.warning) || len(res.Children) != c.children {
				t.Errorf("warnings %q, %d children", res.Warnings, len(res.Children))
			}
			transcripttest.CheckValid(t, res.Events)
			n := len(res.Events)
			for _, ch := range res.Children {
				transcripttest.CheckValid(t, ch.Events)
				n += len(ch.Events)
			}
			// Splitting adds the call pair and the child's run events;
			// a flat import keeps the child's steps without them.
			if c.children == 0 && n != total-4 || c.children == 1 && n != total-2 {
				t.Errorf("%d events, the good listing gives %d", n, total)
			}
		})
	}
}

// FuzzImportChildListing imports an exported run with a child whose
// spec.json params are the fuzzer's data: whatever they say, the import
// gives valid runs and never fails.
func FuzzImportChildListing(f *testing.F) {
	root, child := sampleWithChild(f)
	dir := filepath.Join(f.TempDir(), "run")
	if _, err := Export(dir, Run{Events: root, Children: map[string][]transcript.ExchangeEvent{transcripttest.ChildID: child}}); err != nil {
		f.Fatal(err)
	}
	run := fstest.MapFS{}
	var params json.RawMessage
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		run[filepath.ToSlash(rel)] = &fstest.MapFile{Data: data}
		if rel == "spec.json" {
			var spec Spec
			if err := json.Unmarshal(data, &spec); err != nil {
				return err
			}
			params = spec.Params
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(params))
	f.Add([]byte(`{"reel_run_id":"a","reel_children":[{"run_id":"b","parent_run_id":"a","call_path":"fix","path_prefix":""},{"run_id":"c","parent_run_id":"b","path_prefix":"fix"}]}`))
	f.Add([]byte(`{"reel_run_id":"` + transcripttest.RootID + `","reel_children":[{"run_id":"` + transcripttest.ChildID + `","parent_run_id":"` + transcripttest.RootID + `","call_path":"lint","call_iteration":0,"path_prefix":"fix"}]}`))
	f.Add([]byte("null"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{}
		for k, v := range run {
			fsys[k] = v
		}
		spec := append(append([]byte(`{"flow_keys":["sample","fixer"],"params":`), data...), '}')
		fsys["spec.json"] = &fstest.MapFile{Data: spec}
		res, err := ImportFS(fsys, "fuzz", Options{MaxLineBytes: 1 << 16})
		if err != nil {
			t.Fatal(err)
		}
		transcripttest.CheckValid(t, res.Events)
		seen := map[string]bool{}
		for _, c := range res.Children {
			if seen[c.RunID] || c.RunID == "" {
				t.Fatalf("child %q twice", c.RunID)
			}
			seen[c.RunID] = true
			transcripttest.CheckValid(t, c.Events)
		}
	})
}
