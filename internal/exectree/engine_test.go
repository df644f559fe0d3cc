package exectree

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/runs"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/workflow"
)

// TestMatchesEngineAudit runs a workflow with the real engine (loops inside
// parallel branches, retries inside a loop, nested loops, a sub-workflow
// and an agent step replaying a recorded Claude stream) and checks that
// the tree rebuilt from the transcripts holds exactly the step executions
// the engine wrote into its audit trail, with the same status.
func TestMatchesEngineAudit(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	stream := filepath.Join(testfixtures.Dir(t, "claude-stream-json"), "claude_stream_json_session.jsonl")
	fake := filepath.Join(dir, "fake-claude")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexec cat '"+stream+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	marks := filepath.Join(dir, "marks")
	os.Mkdir(marks, 0o755)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("child.yaml", `
name: child
states:
  initial: up
  up: {type: step, command: "echo child"}
`)
	wfPath := write("wf.yaml", fmt.Sprintf(`
name: exact
states:
  initial: fan
  fan:
    type: parallel
    parallel: [left, right]
    on_success: each
  left:
    type: for_each
    items: '["a","b"]'
    body: [inner]
  inner:
    type: for_each
    items: [1, 2]
    body: [leaf]
  leaf: {type: step, command: "echo {{.loop.Item}}"}
  right:
    type: while
    while: loop.Index < 3
    body: [tick]
  tick: {type: step, command: "echo {{.loop.Index}}"}
  each:
    type: for_each
    items: '["x","y"]'
    body: [flaky]
    on_complete: agent
  flaky:
    type: step
    command: 'test -e %[1]s/{{.loop.Item}} || { touch %[1]s/{{.loop.Item}}; exit 9; }'
    retry: {max_attempts: 3, initial_delay: "1ms", retryable_exit_codes: [9]}
  agent:
    type: agent
    provider: claude
    prompt: Review main.go
    system_prompt: Be brief.
    options: {command: %[2]q}
    on_success: sub
    on_failure: sub
  sub:
    type: call_workflow
    workflow: child.yaml
    on_success: done
  done: {type: terminal}
`, marks, fake))
	e := &engine.Engine{Storage: storage, ProjectDir: dir}
	wf, err := workflow.Load(wfPath, e.LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.Run(context.Background(), wf, engine.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Build(runs.Open(rep.TranscriptPath, runs.Options{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Warnings) > 0 {
		t.Errorf("warnings: %q", tree.Warnings)
	}

	// The engine's record: one step.completed audit entry per execution.
	f, err := os.Open(filepath.Join(storage, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var a struct {
			Event     string `json:"event"`
			RunID     string `json:"run_id"`
			Path      string `json:"path"`
			Status    string `json:"status"`
			Kind      string `json:"kind"`
			Iteration int    `json:"iteration"`
			Attempt   int    `json:"attempt"`
		}
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if a.Event == "step.completed" {
			want = append(want, fmt.Sprintf("%s %s[%d] #%d %s %s", a.RunID[:8], a.Path, a.Iteration, max(a.Attempt, 1), a.Kind, a.Status))
		}
	}
	var got []string
	var walk func(n *Node, run string)
	walk = func(n *Node, run string) {
		for _, c := range n.Children {
			switch {
			case c.Kind == KindIteration:
				walk(c, run)
			case c.RunID != "":
				walk(c, c.RunID)
			default:
				got = append(got, fmt.Sprintf("%s %s[%d] #%d %s %s", run[:8], c.Path, c.Iteration, max(c.Attempt, 1), c.Kind, c.Status))
				walk(c, run)
			}
		}
	}
	walk(tree.Root, tree.Root.RunID)
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tree differs from the engine's audit trail\n--- tree\n%s\n--- audit\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if testing.Verbose() {
		var sb strings.Builder
		Render(&sb, tree)
		t.Log("\n" + sb.String())
	}
	if len(want) < 18 {
		t.Fatalf("only %d executions audited", len(want))
	}
	agent := find(tree.Root, "agent")
	if agent == nil || agent.Usage.InputTokens == 0 || agent.Tools == 0 || agent.Model == "" {
		t.Errorf("agent step without usage or tools: %+v", agent)
	}
	if find(tree.Root, "up") == nil {
		t.Error("the sub-workflow's step is not in the tree")
	}
	// The retried step's iterations end in success: the failed first
	// attempts do not fail the iteration.
	for _, it := range find(tree.Root, "each").Children {
		if it.Status != StatusSuccess {
			t.Errorf("each iteration %d: %s", it.Iteration, it.Status)
		}
	}
}

// Hooks (docs/decisions.md §11) hang under the step they hook; a loop's own hooks
// sit beside its iterations, not inside one; the workflow's hooks are top
// level.
func TestHookNodes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "wf.yaml")
	os.WriteFile(p, []byte(`
name: hooked
hooks:
  workflow_start: [{command: echo start}]
  workflow_end: [{command: echo end}]
states:
  initial: each
  each:
    type: while
    while: loop.Index < 2
    body: [item]
    hooks: {pre: [{command: echo pre}], post: [{command: echo post}]}
  item: {type: step, command: 'echo {{.loop.Index}}', pre_hook: {command: 'exit 2'}}
`), 0o644)
	e := &engine.Engine{Storage: filepath.Join(dir, "storage"), ProjectDir: dir}
	wf, err := workflow.Load(p, e.LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.Run(context.Background(), wf, engine.RunOptions{})
	if err != nil || rep.Status != "success" {
		t.Fatalf("%+v %v", rep, err)
	}
	tree, err := Build(runs.Open(rep.TranscriptPath, runs.Options{}), Options{})
	if err != nil || len(tree.Warnings) > 0 {
		t.Fatalf("%v %v", err, tree.Warnings)
	}
	var b strings.Builder
	var dump func(n *Node, depth int)
	dump = func(n *Node, depth int) {
		for _, c := range n.Children {
			fmt.Fprintf(&b, "%s%s %s %s@%d %s\n", strings.Repeat("  ", depth), c.Name, c.Kind, c.Path, c.Iteration, c.Status)
			dump(c, depth+1)
		}
	}
	dump(tree.Root, 0)
	want := `workflow_start command workflow_start@0 success
each while each@0 success
  pre_hook command each.pre_hook@0 success
  iteration 0 iteration each@0 success
    item command each.item@0 success
      pre_hook command each.item.pre_hook@0 failure
  iteration 1 iteration each@1 success
    item command each.item@1 success
      pre_hook command each.item.pre_hook@1 failure
  post_hook command each.post_hook@0 success
workflow_end command workflow_end@0 success
`
	if b.String() != want {
		t.Fatalf("tree:\n%s\nwant\n%s", b.String(), want)
	}
}

// A conversation's turns are numbered alike everywhere: the run's display
// says "turn 1/3" … "turn 3/3", the transcript holds three message.user
// events and user_turns 3, and the tree says "3 turns". The agent is a
// fake claude CLI replaying recorded turns (engine/testdata).
func TestConversationTurns(t *testing.T) {
	dir := t.TempDir()
	fake, err := filepath.Abs(filepath.Join("..", "engine", "testdata", "fake-claude-turns"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "wf.yaml")
	os.WriteFile(p, []byte(fmt.Sprintf(`
name: conv
states:
  initial: review
  review:
    type: agent
    provider: claude
    prompt: Review main.go
    options: {command: %q}
    conversation:
      - Now list the three riskiest changes.
      - 'Fix the first one: {{ .turn.Output }}'
`, fake)), 0o644)
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o755)
	var display strings.Builder
	e := &engine.Engine{Storage: filepath.Join(dir, "storage"), ProjectDir: dir, Display: &display,
		Environ: append(os.Environ(), "REEL_TEST_TURNS_STATE="+state)}
	wf, err := workflow.Load(p, e.LoadOptions())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.Run(context.Background(), wf, engine.RunOptions{})
	if err != nil || rep.Status != "success" {
		t.Fatalf("%+v %v\n%s", rep, err, display.String())
	}
	for _, l := range []string{"turn 1/3", "turn 2/3", "turn 3/3"} {
		if !strings.Contains(display.String(), l) {
			t.Errorf("display lacks %q:\n%s", l, display.String())
		}
	}
	tree, err := Build(runs.Open(rep.TranscriptPath, runs.Options{}), Options{})
	if err != nil || len(tree.Warnings) > 0 {
		t.Fatalf("%v %v", err, tree.Warnings)
	}
	review := find(tree.Root, "review")
	if review == nil || review.UserTurns != 3 {
		t.Fatalf("review node %+v, want 3 user turns", review)
	}
	var b strings.Builder
	if err := Render(&b, tree); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  3 turns  ") {
		t.Errorf("tree does not say 3 turns:\n%s", b.String())
	}
}
