package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/index"

	"github.com/reelhq/reel/internal/flowstudio"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

// runShape is what a round trip must keep of a run: its counts and, per
// call_workflow execution in order, the child run it started.
type runShape struct {
	Name                     string
	Messages, Calls, Results int
	Tokens                   int64
	Status                   string
	Children                 []callShape
}

type callShape struct {
	Path      string
	Iteration int
	// Completed says the parent recorded call_workflow.completed.
	Completed bool
	Run       runShape
}

// shapeOf reads the run at path and, through child_run_id, its child runs,
// which must sit beside it (runs.Run.Child) and name the run as their parent.
func shapeOf(t *testing.T, path string) runShape {
	t.Helper()
	events, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var s runShape
	if sp := events[0].Step(); sp != nil {
		s.Name = sp.Name
	}
	completed := map[string]bool{}
	for _, e := range events {
		if e.Type == transcript.CallWorkflowCompleted {
			completed[e.ChildRunID] = true
		}
	}
	for _, e := range events {
		switch e.Type {
		case transcript.MessageUser, transcript.MessageAssistant:
			s.Messages++
		case transcript.ToolCall:
			s.Calls++
		case transcript.ToolResult:
			s.Results++
		case transcript.StepCompleted:
			var ar transcript.AgentResult
			if sp := e.Step(); sp.Kind == transcript.KindAgent && transcript.DecodeResult(sp.Result, &ar) == nil {
				s.Tokens += ar.Usage.TotalTokens
			}
		case transcript.RunCompleted:
			var rr transcript.RunResult
			if transcript.DecodeResult(e.Step().Result, &rr) == nil {
				s.Status = rr.Status
			}
		case transcript.CallWorkflowStarted:
			c, err := runs.Open(path, runs.Options{}).Child(e.ChildRunID)
			if err != nil {
				t.Fatalf("%s: call_workflow.started: %v", path, err)
			}
			p := c.Path
			child, err := transcript.ReadFile(p)
			if err != nil {
				t.Fatalf("child run of %s at %s: %v", e.Path, p, err)
			}
			for _, ce := range child {
				if ce.ParentRunID != e.RunID || ce.RunID != e.ChildRunID {
					t.Fatalf("child %s event %d: run %s parent %q, want run %s parent %s", p, ce.Seq, ce.RunID, ce.ParentRunID, e.ChildRunID, e.RunID)
				}
			}
			s.Children = append(s.Children, callShape{Path: e.Path, Iteration: e.Iteration, Completed: completed[e.ChildRunID], Run: shapeOf(t, p)})
		}
	}
	return s
}

// TestExportFlowStudioChildRunsRoundTrip runs a workflow whose call_workflow
// steps (one nested, two in a loop) start child runs, exports it to Flow
// Studio, imports it back, and compares every run's messages, tool pairs,
// tokens and parent/child links.
func TestExportFlowStudioChildRunsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "fake-claude"), "#!/bin/sh\ncat <<'X'\n"+
		`{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","tools":["Bash"]}`+"\n"+
		`{"type":"assistant","session_id":"s1","message":{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":7,"output_tokens":3}}}`+"\n"+
		`{"type":"user","session_id":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"main.go"}]}}`+"\n"+
		`{"type":"assistant","session_id":"s1","message":{"id":"m2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":10,"output_tokens":2}}}`+"\n"+
		`{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"done","session_id":"s1","usage":{"input_tokens":17,"output_tokens":5}}`+"\nX\n", 0o755)
	// The command is absolute: a relative one resolves against each
	// workflow file's directory.
	agent := func(prompt, next string) string {
		return fmt.Sprintf("{type: agent, provider: claude, prompt: '%s', options: {command: %q}, on_success: %s}", prompt, filepath.Join(dir, "fake-claude"), next)
	}
	writeFile(t, filepath.Join(dir, ".reel", "workflows", "grandchild.yaml"),
		"name: grandchild\nstates:\n  initial: check\n  check: "+agent("check it", "lint")+"\n  lint: {type: step, command: 'echo lint'}\n", 0o644)
	writeFile(t, filepath.Join(dir, ".reel", "workflows", "child.yaml"),
		"name: child\nstates:\n  initial: fix\n  fix: "+agent("fix it", "deeper")+"\n  deeper: {type: call_workflow, workflow: grandchild, on_success: end}\n  end: {type: terminal, message: fixed}\n", 0o644)
	writeFile(t, filepath.Join(dir, "parent.yaml"), "name: parent\nstates:\n  initial: plan\n  plan: "+agent("plan it", "sub")+`
  sub: {type: call_workflow, workflow: child, on_success: each}
  each: {type: for_each, items: '["a","b"]', body: [again], on_success: end}
  again: {type: call_workflow, workflow: grandchild}
  end: {type: terminal, message: done}
`, 0o644)
	storage := filepath.Join(dir, "store")
	res := runBinary(t, dir, "run", "parent.yaml", "--storage", storage)
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	m := transcriptLine.FindStringSubmatch(res.stderr)
	if m == nil {
		t.Fatalf("no transcript path in stderr:\n%s", res.stderr)
	}
	root := m[1]
	if !filepath.IsAbs(root) {
		root = filepath.Join(dir, root)
	}
	want := shapeOf(t, root)
	if len(want.Children) != 3 || len(want.Children[0].Run.Children) != 1 || want.Children[2].Iteration != 1 || want.Tokens == 0 || want.Calls == 0 {
		t.Fatalf("the workflow did not run as intended: %+v", want)
	}

	ctx := context.Background()
	fsDir := filepath.Join(t.TempDir(), "run")
	if _, stderr, err := runReel(t, ctx, "export", root, "--to", "flowstudio", fsDir); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	checkFlowStudioChildren(t, fsDir, 4)

	storage2 := t.TempDir()
	out := transcript.Dir(storage2)
	stdout, stderr, err := runReel(t, ctx, "import", "--from", "flowstudio", "--json", "--storage", storage2, fsDir)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, stderr)
	}
	runs := decodeOneJSON(t, stdout)
	if len(runs) != 1 || len(runs[0].ChildRunIDs) != 4 || len(runs[0].Warnings) != 0 {
		t.Fatalf("import output %+v", runs)
	}
	verifyStorage(t, out)
	files, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
	if len(files) != 5 {
		t.Errorf("%d transcripts imported, want 5 (a parent, a child, three grandchildren)", len(files))
	}
	got := shapeOf(t, runs[0].Transcript)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the runs:\n got %+v\nwant %+v", got, want)
	}
	// The imported runs list as reel's own: one top-level run, the others
	// marked with their parent.
	stdout, stderr, err = runReel(t, ctx, "runs", "--json", "--storage", storage2)
	if err != nil {
		t.Fatalf("runs: %v\n%s", err, stderr)
	}
	var list []index.Run
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, stdout)
	}
	top := 0
	for _, r := range list {
		if r.ParentRunID == "" {
			top++
		}
	}
	if len(list) != 5 || top != 1 {
		t.Errorf("runs lists %d runs, %d top-level; want 5 and 1:\n%s", len(list), top, stdout)
	}
}

// checkFlowStudioChildren checks that the export keeps each child run
// attributable the way a Flow Studio reader sees it: a flow per child run
// listed in spec.json, and params.reel_children naming the flow and the
// step (flow_key/step_id of a step_start in events.jsonl) that started it.
func checkFlowStudioChildren(t *testing.T, fsDir string, n int) {
	t.Helper()
	var spec struct {
		FlowKeys []string `json:"flow_keys"`
		Params   struct {
			RunID    string                 `json:"reel_run_id"`
			Children []flowstudio.ChildInfo `json:"reel_children"`
		} `json:"params"`
	}
	data, err := os.ReadFile(filepath.Join(fsDir, "spec.json"))
	if err != nil || json.Unmarshal(data, &spec) != nil {
		t.Fatalf("spec.json: %v\n%s", err, data)
	}
	if len(spec.Params.Children) != n || len(spec.FlowKeys) != n+1 {
		t.Fatalf("spec.json: %d flows, %d children, want %d and %d", len(spec.FlowKeys), len(spec.Params.Children), n+1, n)
	}
	steps := map[string]bool{}
	evData, err := os.ReadFile(filepath.Join(fsDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(evData)), "\n") {
		var e flowstudio.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("events.jsonl: %v", err)
		}
		if e.Kind == "step_start" && e.FlowKey != nil && e.StepID != nil {
			steps[*e.FlowKey+"/"+*e.StepID] = true
		}
	}
	flows := strings.Join(spec.FlowKeys, " ")
	for _, c := range spec.Params.Children {
		if !steps[c.ParentFlowKey+"/"+c.CallStepID] {
			t.Errorf("child %s: calling step %s/%s has no step_start", c.RunID, c.ParentFlowKey, c.CallStepID)
		}
		if !strings.Contains(" "+flows+" ", " "+c.FlowKey+" ") || c.FlowKey == c.ParentFlowKey {
			t.Errorf("child %s: flow %q not a flow of its own in %v", c.RunID, c.FlowKey, spec.FlowKeys)
		}
		if c.RunCompleted == nil || c.CallStarted == nil || c.CallCompleted == nil {
			t.Errorf("child %s: boundary events missing: %+v", c.RunID, c)
		}
	}
}

// --mask-secrets on export and replay masks what a run recorded without
// masking, in both formats and in the replay.
func TestExportAndReplayMaskSecrets(t *testing.T) {
	t.Setenv("DEPLOY_TOKEN", "deploy-token-value-42")
	src := t.TempDir()
	session := filepath.Join(src, "s.jsonl")
	if err := os.WriteFile(session, []byte(`{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s-1","type":"user","message":{"role":"user","content":"ship it with deploy-token-value-42"},"uuid":"u1","timestamp":"2025-11-01T10:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"sessionId":"s-1","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"m1","type":"message","role":"assistant","content":[{"type":"text","text":"Shipping with ghp_abcdefghijklmnopqrstuvwxyz0123456789."}],"usage":{"input_tokens":1,"output_tokens":1}},"uuid":"u2","timestamp":"2025-11-01T10:00:01.000Z"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	storage := t.TempDir()
	runs, _ := importJSON(t, "--storage", storage, session)
	leaks := []string{"deploy-token-value-42", "ghp_abcdefghijklmnopqrstuvwxyz"}
	check := func(what string, data []byte) {
		t.Helper()
		for _, leak := range leaks {
			if strings.Contains(string(data), leak) {
				t.Errorf("%s: %s not masked", what, leak)
			}
		}
		if !strings.Contains(string(data), secrets.Masked) {
			t.Errorf("%s: nothing masked", what)
		}
	}
	for _, to := range []string{"agentlog", "flowstudio"} {
		out := filepath.Join(t.TempDir(), to)
		if _, errOut, err := runReel(t, context.Background(), "export", "--storage", storage, "--mask-secrets", runs[0].RunID, "--to", to, out); err != nil {
			t.Fatalf("%v: %s", err, errOut)
		}
		var all []byte
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				all = append(all, b...)
			}
			return nil
		})
		check("export --to "+to, all)
	}
	out, errOut, err := runReel(t, context.Background(), "replay", "--storage", storage, "--mask-secrets", runs[0].RunID)
	if err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	check("replay", []byte(out))
}
