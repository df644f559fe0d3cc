package verify

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reelhq/reel/transcript"
)

// writeRun records a small but complete run: a command step, an agent step
// with a tool pair, a loop with two iterations and a call_workflow whose
// child is written to its own file. It returns the parent's path.
func writeRun(t *testing.T, dir string) (parent, child string) {
	t.Helper()
	pid, cid := transcript.NewRunID(), transcript.NewRunID()
	p, err := transcript.Create(dir, pid, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := transcript.Create(dir, cid, transcript.Options{ParentRunID: pid})
	if err != nil {
		t.Fatal(err)
	}
	step := func(name, kind string) *transcript.StepPayload {
		return &transcript.StepPayload{Name: name, Kind: kind}
	}
	rec := func(r *transcript.Recorder, e transcript.ExchangeEvent) {
		if _, err := r.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	rec(p, transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: step("demo", "workflow")})
	rec(p, transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "build", Payload: step("build", "command")})
	rec(p, transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "build", Payload: step("build", "command")})
	rec(p, transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "ask", Payload: step("ask", "agent")})
	rec(p, transcript.ExchangeEvent{Type: transcript.MessageUser, Path: "ask", Payload: &transcript.MessagePayload{Role: "user", Blocks: []transcript.ContentBlock{{Type: transcript.BlockText, Fidelity: transcript.FidelityRouter, Text: "hi"}}}})
	rec(p, transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "ask", Payload: &transcript.ToolPayload{Name: "Read", CallID: "t1", Input: map[string]any{"path": "x"}, Fidelity: transcript.FidelityAgentEmitted}})
	rec(p, transcript.ExchangeEvent{Type: transcript.ToolResult, Path: "ask", Payload: &transcript.ToolPayload{Name: "Read", CallID: "t1", Output: "data", Fidelity: transcript.FidelityAgentEmitted}})
	rec(p, transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "ask", Payload: step("ask", "agent")})
	rec(p, transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "loop", Payload: step("loop", "for_each")})
	for i := 0; i < 2; i++ {
		rec(p, transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "loop.body", Iteration: i, Payload: step("body", "command")})
		rec(p, transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "loop.body", Iteration: i, Payload: step("body", "command")})
	}
	rec(p, transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "loop", Payload: step("loop", "for_each")})
	rec(p, transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "sub", Payload: step("sub", "call_workflow")})
	rec(p, transcript.ExchangeEvent{Type: transcript.CallWorkflowStarted, Path: "sub", ChildRunID: cid, Payload: step("sub", "call_workflow")})
	rec(c, transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: step("child", "workflow")})
	rec(c, transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "inner", Payload: step("inner", "command")})
	rec(c, transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "inner", Payload: step("inner", "command")})
	rec(c, transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: step("child", "workflow")})
	rec(p, transcript.ExchangeEvent{Type: transcript.CallWorkflowCompleted, Path: "sub", ChildRunID: cid, Payload: step("sub", "call_workflow")})
	rec(p, transcript.ExchangeEvent{Type: transcript.StepCompleted, Path: "sub", Payload: step("sub", "call_workflow")})
	rec(p, transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: step("demo", "workflow")})
	p.Close()
	c.Close()
	return p.Path(), c.Path()
}

func messages(r *Report) string {
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString(p.String() + "\n")
	}
	for _, p := range r.Unreadable {
		b.WriteString("unreadable " + p.String() + "\n")
	}
	return b.String()
}

func TestValidRunWithChild(t *testing.T) {
	dir := t.TempDir()
	parent, _ := writeRun(t, dir)
	rep := Paths([]string{parent}, Options{})
	if len(rep.Problems) != 0 || len(rep.Unreadable) != 0 {
		t.Fatalf("problems:\n%s", messages(rep))
	}
	if len(rep.Files) != 2 || rep.Files[0].Children != 1 || !rep.Files[1].Valid {
		t.Fatalf("files %+v: the child must be checked through the link", rep.Files)
	}
	// A directory (the storage root or the transcripts dir) checks each once.
	storage := filepath.Dir(dir)
	_ = storage
	rep = Paths([]string{dir, parent}, Options{})
	if len(rep.Files) != 2 || rep.Violations() != 0 {
		t.Fatalf("dir: %+v\n%s", rep.Files, messages(rep))
	}
}

// mutate rewrites line n (1-based) of a file; an empty replacement deletes it.
func mutate(t *testing.T, path string, n int, f func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	lines[n-1] = f(lines[n-1])
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestViolations(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(t *testing.T, parent, child string)
		want   []string
	}{
		{"seq gap", func(t *testing.T, p, _ string) {
			mutate(t, p, 3, func(s string) string { return strings.Replace(s, `"seq":3,`, `"seq":30,`, 1) })
		}, []string{":3: seq 30, want 3", ":4: seq 4, want 31"}},
		{"unknown event type", func(t *testing.T, p, _ string) {
			mutate(t, p, 2, func(s string) string { return strings.Replace(s, `"step.started"`, `"step.paused"`, 1) })
		}, []string{`:2: unknown event type "step.paused"`}},
		{"unknown block type", func(t *testing.T, p, _ string) {
			mutate(t, p, 5, func(s string) string { return strings.Replace(s, `"type":"text"`, `"type":"image"`, 1) })
		}, []string{`:5: unknown block type "image"`}},
		{"bad fidelity", func(t *testing.T, p, _ string) {
			mutate(t, p, 6, func(s string) string { return strings.Replace(s, `"agent_emitted"`, `"model"`, 1) })
		}, []string{`:6: tool.call has fidelity "model"`}},
		{"crlf", func(t *testing.T, p, _ string) {
			mutate(t, p, 2, func(s string) string { return strings.TrimSuffix(s, "\n") + "\r\n" })
		}, []string{":2: malformed event: CRLF line ending"}},
		{"malformed", func(t *testing.T, p, _ string) {
			mutate(t, p, 3, func(string) string { return "{\"seq\":3,\n" })
		}, []string{":3: ", "step build (iteration 0) started 1 more time(s) than it completed"}},
		{"missing step.completed", func(t *testing.T, p, _ string) {
			mutate(t, p, 3, func(string) string { return "" })
			renumber(t, p)
		}, []string{"step build (iteration 0) started 1 more time(s)"}},
		{"completion without start", func(t *testing.T, p, _ string) {
			mutate(t, p, 2, func(string) string { return "" })
			renumber(t, p)
		}, []string{":2: step.completed for build (iteration 0) without a step.started"}},
		{"tool result missing", func(t *testing.T, p, _ string) {
			mutate(t, p, 7, func(string) string { return "" })
			renumber(t, p)
		}, []string{":6: tool.call t1 has no tool.result"}},
		{"tool result before call", func(t *testing.T, p, _ string) {
			mutate(t, p, 6, func(string) string { return "" })
			renumber(t, p)
		}, []string{":6: tool.result t1 without a preceding tool.call"}},
		{"run.started not first", func(t *testing.T, p, _ string) {
			mutate(t, p, 1, func(string) string { return "" })
			renumber(t, p)
		}, []string{":1: first event is step.started, want run.started"}},
		{"event after run.completed", func(t *testing.T, p, _ string) {
			data, _ := os.ReadFile(p)
			lines := strings.SplitAfter(string(data), "\n")
			os.WriteFile(p, []byte(string(data)+strings.Replace(lines[1], `"seq":2,`, `"seq":20,`, 1)), 0o600)
		}, []string{":20: step.started after run.completed"}},
		{"mode", func(t *testing.T, p, _ string) { os.Chmod(p, 0o644) }, []string{"mode is 0644, want 0600"}},
		{"file name differs from run_id", func(t *testing.T, p, c string) {
			other := filepath.Join(filepath.Dir(p), transcript.NewRunID()+".jsonl")
			os.Rename(c, other)
		}, []string{"child transcript", "missing"}},
		{"child names another parent", func(t *testing.T, p, c string) {
			data, _ := os.ReadFile(c)
			pid := strings.TrimSuffix(filepath.Base(p), ".jsonl")
			os.WriteFile(c, []byte(strings.ReplaceAll(string(data), pid, "a4b9d6e2-1111-4222-8333-444455556666")), 0o600)
		}, []string{"names parent_run_id \"a4b9d6e2-1111-4222-8333-444455556666\", not this run", "parent transcript"}},
		{"torn tail", func(t *testing.T, p, _ string) {
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)-20], 0o600)
		}, []string{":19: torn final line: 172 bytes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p, ch := writeRun(t, dir)
			c.break_(t, p, ch)
			rep := Paths([]string{p}, Options{})
			got := messages(rep)
			if rep.Violations() == 0 {
				t.Fatalf("no violation reported:\n%s", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("want %q in:\n%s", w, got)
				}
			}
		})
	}
}

// renumber rewrites seq to 1..N after a test deleted lines.
func renumber(t *testing.T, path string) {
	t.Helper()
	data, _ := os.ReadFile(path)
	var out bytes.Buffer
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		ev, err := transcript.DecodeEvent(line)
		if err != nil {
			t.Fatal(err)
		}
		ev.Seq = uint64(i + 1)
		b, err := transcript.AppendEvent(nil, &ev)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	os.WriteFile(path, out.Bytes(), 0o600)
}

func TestInterruptedRunIsAWarning(t *testing.T) {
	dir := t.TempDir()
	id := transcript.NewRunID()
	r, _ := transcript.Create(dir, id, transcript.Options{})
	r.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "w", Kind: "workflow"}})
	r.Record(transcript.ExchangeEvent{Type: transcript.StepStarted, Path: "a", Payload: &transcript.StepPayload{Name: "a", Kind: "agent"}})
	r.Record(transcript.ExchangeEvent{Type: transcript.ToolCall, Path: "a", Payload: &transcript.ToolPayload{Name: "Bash", CallID: "x", Fidelity: transcript.FidelityAgentEmitted}})
	r.Close()
	rep := Paths([]string{r.Path()}, Options{})
	if rep.Violations() != 0 || len(rep.Problems) != 1 || !rep.Problems[0].Warning || !strings.Contains(rep.Problems[0].Message, "interrupted") {
		t.Fatalf("%s", messages(rep))
	}
	if !rep.Files[0].Interrupted || !rep.Files[0].Valid {
		t.Fatalf("%+v", rep.Files[0])
	}
	if !strings.Contains(rep.Problems[0].String(), "warning: interrupted") {
		t.Fatal(rep.Problems[0].String())
	}
}

func TestUnreadableAndNames(t *testing.T) {
	dir := t.TempDir()
	rep := Paths([]string{filepath.Join(dir, "nope.jsonl")}, Options{})
	if len(rep.Unreadable) != 1 {
		t.Fatalf("%+v", rep)
	}
	// A transcript under a wrong name, an empty file, a non-UUID name.
	p, _ := writeRun(t, dir)
	bad := filepath.Join(dir, "copy.jsonl")
	data, _ := os.ReadFile(p)
	os.WriteFile(bad, data, 0o600)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, nil, 0o600)
	rep = Paths([]string{bad, empty}, Options{SkipMode: true})
	got := messages(rep)
	for _, w := range []string{"copy.jsonl: file name: run id \"copy\"", "does not match the file name", "empty.txt: file name is not <run-id>.jsonl", "empty.txt: warning: no events"} {
		if !strings.Contains(got, w) {
			t.Errorf("want %q in\n%s", w, got)
		}
	}
}

// TestRawViolations checks rules a strict writer can never break, on lines
// written by hand.
func TestRawViolations(t *testing.T) {
	id := transcript.NewRunID()
	other := transcript.NewRunID()
	env := func(seq int, typ, path, extra, payload string) string {
		return `{"seq":` + itoa(seq) + `,"run_id":"` + id + `"` + extra + `,"type":"` + typ + `","path":"` + path + `","iteration":0,"timestamp":"2026-06-08T08:14:42.000000Z","payload":` + payload + `}`
	}
	wf := `{"name":"w","kind":"workflow"}`
	lines := []string{
		env(1, "run.started", "x", "", wf),
		env(2, "run.started", "", "", wf),
		env(3, "step.started", "a", "", `{"name":"a","kind":""}`),
		env(4, "step.started", "b", "", `{"role":"user","blocks":[]}`),
		env(5, "message.user", "a", "", `{"role":"assistant","blocks":[{"type":"text","fidelity":"bot","text":"x"},{"type":"tool_use","fidelity":"router","tool_name":"R"}]}`),
		env(6, "message.assistant", "a", "", `{"name":"x","kind":"agent"}`),
		env(7, "tool.call", "a", "", `{"call_id":"c","fidelity":"router"}`),
		env(8, "tool.call", "a", "", `{"name":"R","call_id":"c","fidelity":"router"}`),
		env(9, "tool.result", "a", "", `{"name":"R","call_id":"c","fidelity":"router"}`),
		env(10, "tool.result", "a", "", `{"name":"R","call_id":"c","fidelity":"router"}`),
		env(11, "tool.result", "a", "", `{"name":"R","call_id":"","fidelity":"router"}`),
		env(12, "step.call_workflow.started", "s", "", `{"name":"s","kind":"call_workflow"}`),
		env(13, "step.call_workflow.completed", "s", `,"child_run_id":"`+other+`"`, `{"name":"s","kind":"call_workflow"}`),
		env(14, "step.completed", "a", `,"child_run_id":"`+other+`"`, `{"name":"a","kind":"agent","attempt":-1}`),
		strings.Replace(env(15, "step.completed", "b", `,"parent_run_id":"`+other+`"`, `{"name":"","kind":"agent"}`), `"run_id":"`+id, `"run_id":"`+other, 1),
		strings.Replace(env(16, "step.completed", "z", "", `{"name":"z","kind":"agent"}`), `"iteration":0`, `"iteration":-2`, 1),
		env(17, "step.call_workflow.started", "s2", `,"child_run_id":"not-a-uuid"`, `{"name":"s2","kind":"call_workflow"}`),
		env(18, "run.completed", "", "", `null`),
	}
	dir := t.TempDir()
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep := Paths([]string{path}, Options{})
	got := messages(rep)
	for _, want := range []string{
		`:1: run.started has path "x", want empty`,
		":2: run.started again without attempt 2",
		":3: step.started payload has no kind",
		":4: step.started payload is not a step payload",
		`:5: message.user has role "assistant", want "user"`,
		`:5: block 0 has fidelity "bot"`,
		":5: block 1: tool_use without tool_id",
		":6: message.assistant payload is not a message payload",
		":7: tool.call has no tool name",
		":8: tool.call c appears twice",
		":10: tool.result c appears twice",
		":11: tool.result has an empty call_id",
		":12: step.call_workflow.started without child_run_id",
		":13: step.call_workflow.completed names child_run_id " + other + " that was never started",
		":14: child_run_id on a step.completed event",
		":14: negative attempt -1",
		":15: run_id " + other + " differs from the first event's",
		":15: parent_run_id",
		":15: step.completed payload has no name",
		":16: negative iteration -2",
		":17: child_run_id: run id \"not-a-uuid\"",
		"call_workflow s2 (iteration 0) has no step.call_workflow.completed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestParentLinkFromChildSide(t *testing.T) {
	dir := t.TempDir()
	_, child := writeRun(t, dir)
	// Checking only the child still checks that its parent names it.
	rep := Paths([]string{child}, Options{})
	if rep.Violations() != 0 || len(rep.Files) != 1 {
		t.Fatalf("child alone: %s", messages(rep))
	}
	// A parent file that is missing is reported from the child's side.
	id := transcript.NewRunID()
	orphan, err := transcript.Create(dir, id, transcript.Options{ParentRunID: transcript.NewRunID()})
	if err != nil {
		t.Fatal(err)
	}
	orphan.Record(transcript.ExchangeEvent{Type: transcript.RunStarted, Payload: &transcript.StepPayload{Name: "c", Kind: "workflow"}})
	orphan.Record(transcript.ExchangeEvent{Type: transcript.RunCompleted, Payload: &transcript.StepPayload{Name: "c", Kind: "workflow"}})
	orphan.Close()
	rep = Paths([]string{orphan.Path()}, Options{})
	if !strings.Contains(messages(rep), "parent transcript") || !strings.Contains(messages(rep), "missing") {
		t.Fatalf("orphan: %s", messages(rep))
	}
}
