package plugin_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/reelhq/reel/internal/plugin"
	"github.com/reelhq/reel/internal/plugin/plugintest"
	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/internal/workflow"
)

// open installs the named test plugins in a fresh directory and opens a
// host on it, closed (and checked for leftover processes) at the end.
func open(t *testing.T, opts plugin.Options, names ...string) (*plugin.Host, string, *proctest.Buffer) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		plugintest.Install(t, dir, n)
	}
	log := &proctest.Buffer{}
	opts.Dirs = []string{dir}
	opts.Log = log
	h := plugin.Open(opts)
	t.Cleanup(func() {
		h.Close()
		plugintest.NoneLeft(t, dir)
	})
	return h, dir, log
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestOperate(t *testing.T) {
	h, _, log := open(t, plugin.Options{}, "echo")
	ctx := ctxFor(t)
	res, err := h.Operate(ctx, "echo.echo", map[string]any{"text": "hi", "prefix": "> ", "repeat": "2", "extra": 7})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"output": "> hi> hi", "text": "hi", "repeat": 2.0, "length": 8.0}
	if !res.Success || res.Output != "> hi> hi" || !reflect.DeepEqual(res.Outputs, want) {
		t.Errorf("result %+v", res)
	}
	// the templated "2" reached the plugin as the integer its schema
	// declares; an undeclared input passes as it is
	if res.Inputs["repeat"] != int64(2) || res.Inputs["extra"] != 7 {
		t.Errorf("inputs as sent: %#v", res.Inputs)
	}
	if got := res.Text(); got != "length=8\noutput=> hi> hi\nrepeat=2\ntext=hi" {
		t.Errorf("Text() = %q", got)
	}
	if !strings.Contains(log.String(), "plugin echo: no stored checksum") {
		t.Errorf("no warning about the missing checksum: %q", log.String())
	}

	res, err = h.Operate(ctx, "echo.fail", map[string]any{"reason": "no"})
	if err != nil || res.Success || res.Error != "refused: no" {
		t.Errorf("fail: %+v %v", res, err)
	}

	for _, c := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{}, "text is required (string: Text to echo.)"},
		{map[string]any{"text": ""}, "text is required"},
		{map[string]any{"text": "x", "repeat": "many"}, `repeat: want an integer, got "many"`},
		{map[string]any{"text": "x", "loud": "yes"}, `loud: want true or false, got "yes"`},
		{map[string]any{"text": []any{"a"}}, "text: want a string, got a list"},
	} {
		_, err := h.Operate(ctx, "echo.echo", c.in)
		var ie *plugin.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("inputs %v: error %v, want %q", c.in, err, c.want)
		}
	}
	_, err = h.Operate(ctx, "echo.shout", nil)
	if !errors.Is(err, plugin.ErrUnknown) || !strings.Contains(err.Error(), `plugin echo has no operation "shout" (it has: echo, fail, emit)`) {
		t.Errorf("unknown operation: %v", err)
	}
	_, err = h.Operate(ctx, "nope.x", nil)
	if !errors.Is(err, plugin.ErrUnavailable) || !strings.Contains(err.Error(), "plugin nope is not installed") {
		t.Errorf("unknown plugin: %v", err)
	}
}

func TestOperationsForTools(t *testing.T) {
	h, _, _ := open(t, plugin.Options{}, "echo", "policy")
	ctx := ctxFor(t)
	ops, err := h.Operations(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || ops[0].QualifiedName() != "echo.echo" || ops[0].Description != "Echo text, optionally prefixed." {
		t.Fatalf("operations: %+v", ops)
	}
	b, _ := json.Marshal(ops[0].InputSchema())
	want := `{"properties":{"loud":{"type":"boolean"},"prefix":{"description":"Prepended to the text.","type":"string"},"repeat":{"default":1,"description":"How many times.","type":"integer"},"text":{"description":"Text to echo.","type":"string"}},"required":["text"],"type":"object"}`
	if string(b) != want {
		t.Errorf("input schema:\n%s\nwant\n%s", b, want)
	}
	if _, err := h.Operations(ctx, "policy"); !errors.Is(err, plugin.ErrUnknown) {
		t.Errorf("a validator's operations: %v", err)
	}
}

func TestDatabaseOperations(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "app.db")
	h, _, _ := open(t, plugin.Options{
		Config:  map[string]map[string]any{"db": {"database": "${DB_DIR}/app.db"}},
		Environ: append(os.Environ(), "DB_DIR="+filepath.Dir(dbPath)),
	}, "db")
	ctx := ctxFor(t)
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{"CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, active INTEGER)", nil},
		{"INSERT INTO users (name, active) VALUES (?, ?), (?, ?)", []any{"ann", 1, "bob", 0}},
	} {
		in := map[string]any{"sql": stmt.sql}
		if stmt.args != nil {
			in["args"] = stmt.args
		}
		res, err := h.Operate(ctx, "db.exec", in)
		if err != nil || !res.Success {
			t.Fatalf("%s: %+v %v", stmt.sql, res, err)
		}
	}
	// args given as the JSON text a template renders
	res, err := h.Operate(ctx, "db.query", map[string]any{"sql": "SELECT name FROM users WHERE active = ?", "args": "[1]"})
	if err != nil || !res.Success {
		t.Fatalf("query: %+v %v", res, err)
	}
	if res.Outputs["count"] != 1.0 || !reflect.DeepEqual(res.Outputs["rows"], []any{map[string]any{"name": "ann"}}) {
		t.Errorf("query result %+v", res.Outputs)
	}
	res, err = h.Operate(ctx, "db.exec", map[string]any{"sql": "INSERT INTO nowhere VALUES (1)"})
	if err != nil || res.Success || !strings.Contains(res.Error, "no such table") {
		t.Errorf("bad statement: %+v %v", res, err)
	}
	// the file is a real SQLite database
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM users").Scan(&n); err != nil || n != 2 {
		t.Errorf("users in %s: %d %v", dbPath, n, err)
	}
}

func TestConfigRequiredAndPrecedence(t *testing.T) {
	h, _, _ := open(t, plugin.Options{}, "db")
	_, err := h.Operate(ctxFor(t), "db.query", map[string]any{"sql": "SELECT 1"})
	if !errors.Is(err, plugin.ErrUnavailable) || !strings.Contains(err.Error(), "plugin db: start: config database is required (path of the SQLite file): set it under plugins.db in .awf/config.yaml") {
		t.Errorf("missing required config: %v", err)
	}

	// state file < project config < project plugins file
	root := t.TempDir()
	state := filepath.Join(root, "state", plugin.StateFile)
	os.MkdirAll(filepath.Dir(state), 0o755)
	os.WriteFile(state, []byte(`{"recorder": {"enabled": true, "config": {"log": "from-state", "delay": "bad"}}}`), 0o600)
	project := filepath.Join(root, "plugins.yaml")
	os.WriteFile(project, []byte("recorder:\n  config:\n    delay: 1ms\n"), 0o600)
	st, err := plugin.LoadState(state, project)
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(root, "events.log")
	h, _, _ = open(t, plugin.Options{State: st, Config: map[string]map[string]any{"recorder": {"log": logPath}}}, "recorder")
	if errs := h.Start(ctxFor(t), "recorder"); len(errs) > 0 {
		t.Fatalf("start: %v", errs)
	}
	h.Publish(plugin.Lifecycle{Type: plugin.WorkflowStarted, RunID: "r1", Workflow: "w"})
	h.Close()
	if b, err := os.ReadFile(logPath); err != nil || !strings.HasPrefix(string(b), "workflow.started") {
		t.Errorf("the recorder did not log where the project config says: %q %v", b, err)
	}
}

func TestStepTypes(t *testing.T) {
	h, _, _ := open(t, plugin.Options{}, "steps")
	ctx := ctxFor(t)
	if !h.ProvidesStepType("steps.greet") || h.ProvidesStepType("echo.greet") || h.ProvidesStepType("greet") {
		t.Error("ProvidesStepType")
	}
	types, err := h.StepTypes(ctx, "steps")
	if err != nil || len(types) != 3 || types[0].QualifiedName() != "steps.greet" {
		t.Fatalf("step types %+v %v", types, err)
	}
	res, err := h.ExecuteStep(ctx, plugin.StepRequest{Type: "steps.greet", State: "hello", Config: map[string]any{"name": "ann"}})
	if err != nil || res.Output != "hello ann" || res.ExitCode != 0 || !reflect.DeepEqual(res.Data, map[string]any{"name": "ann", "state": "hello"}) {
		t.Errorf("greet: %+v %v", res, err)
	}
	res, err = h.ExecuteStep(ctx, plugin.StepRequest{Type: "steps.exit", Config: map[string]any{"code": 3}})
	if err != nil || res.ExitCode != 3 {
		t.Errorf("exit: %+v %v", res, err)
	}
	res, err = h.ExecuteStep(ctx, plugin.StepRequest{Type: "steps.inputs", Inputs: map[string]any{"n": 1}})
	if err != nil || res.Output != `{"n":1}` {
		t.Errorf("inputs: %+v %v", res, err)
	}
	if _, err := h.ExecuteStep(ctx, plugin.StepRequest{Type: "steps.nope"}); !errors.Is(err, plugin.ErrUnknown) {
		t.Errorf("unknown type: %v", err)
	}
}

const validated = `name: v
states:
  initial: clean
  clean:
    type: step
    description: TODO say why
    command: rm -rf /tmp/x/
    on_success: greet
  greet:
    type: step
    command: echo hi
    timeout: 5s
    on_success: done
  done:
    type: terminal
`

func TestValidate(t *testing.T) {
	h, _, _ := open(t, plugin.Options{}, "policy")
	wf, err := workflow.Parse([]byte(validated), "v.yaml", workflow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, is := range h.Validate(ctxFor(t), wf, 0) {
		got = append(got, fmt.Sprintf("%s %s @%d", is.Severity, is, is.Pos.Line))
	}
	want := []string{
		"warning workflow has no version (plugin policy) @0",
		"error state clean: command: destructive command (plugin policy) @4",
		"warning state clean: timeout: command has no timeout (plugin policy) @4",
		"info state clean: description: description has a TODO (plugin policy) @4",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("issues:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckWorkflow(t *testing.T) {
	root := t.TempDir()
	st, _ := plugin.LoadState(filepath.Join(root, plugin.StateFile), "")
	st.SetEnabled("faulty", false)
	h, _, _ := open(t, plugin.Options{State: st}, "echo", "steps", "faulty")
	wf, err := workflow.Parse([]byte(`name: c
states:
  initial: a
  a:
    type: operation
    operation: echo.shout
    on_success: b
  b:
    type: operation
    operation: echo.echo
    inputs:
      repeat: many
    on_success: c
  c:
    type: operation
    operation: echo.echo
    inputs:
      text: "{{.inputs.x}}"
      loud: true
    on_success: d
  d:
    type: steps.wave
    on_success: e
  e:
    type: operation
    operation: faulty.ok
    on_success: f
  f:
    type: operation
    operation: slack.send
    on_success: done
  done:
    type: terminal
`), "c.yaml", workflow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, is := range h.CheckWorkflow(ctxFor(t), wf) {
		got = append(got, is.Severity+" "+is.String())
	}
	want := []string{
		`warning state a: operation: plugin echo has no operation "shout" (it has: echo, fail, emit) (plugin echo)`,
		`warning state b: inputs: echo.echo: input text is required (string: Text to echo.) (plugin echo)`,
		`warning state b: inputs: echo.echo: input repeat: want an integer, got "many" (plugin echo)`,
		`warning state d: type: plugin steps has no step type "steps.wave" (it has: steps.greet, steps.exit, steps.inputs) (plugin steps)`,
		`warning state e: plugin faulty is disabled (reel plugin enable faulty) (plugin faulty)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("issues:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// mcp_proxy's plugin_tools name plugins and operations the proxy must
// serve: one that is missing is an error (AWF's
// USER.MCP_PROXY.UNKNOWN_PLUGIN and UNKNOWN_OPERATION), at its line.
func TestCheckWorkflowMCPProxy(t *testing.T) {
	root := t.TempDir()
	st, _ := plugin.LoadState(filepath.Join(root, plugin.StateFile), "")
	st.SetEnabled("faulty", false)
	h, _, _ := open(t, plugin.Options{State: st}, "echo", "faulty")
	wf, err := workflow.Parse([]byte(`name: c
states:
  initial: a
  a:
    type: agent
    provider: claude
    prompt: hi
    mcp_proxy:
      enable: true
      plugin_tools:
        - plugin: echo
          expose: [echo, shout]
        - plugin: kubernetes
          expose: [get]
        - plugin: faulty
          expose: [ok]
    on_success: b
  b:
    type: agent
    provider: claude
    prompt: hi
    mcp_proxy:
      enable: false
      plugin_tools:
        - plugin: nowhere
          expose: [x]
    on_success: done
  done:
    type: terminal
`), "c.yaml", workflow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, is := range h.CheckWorkflow(ctxFor(t), wf) {
		got = append(got, fmt.Sprintf("%s %d: %s", is.Severity, is.Pos.Line, is))
	}
	want := []string{
		`error 11: state a: mcp_proxy.plugin_tools: plugin echo has no operation "shout" to expose (it has: echo, fail, emit) (plugin echo)`,
		`error 13: state a: mcp_proxy.plugin_tools: plugin "kubernetes" is not installed`,
		`error 15: state a: mcp_proxy.plugin_tools: plugin faulty is disabled (reel plugin enable faulty) (plugin faulty)`,
	}
	if len(got) != len(want) {
		t.Fatalf("issues:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("issue %d:\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
}

func TestEvents(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "events.log")
	h, _, hostLog := open(t, plugin.Options{Config: map[string]map[string]any{"recorder": {"log": logPath}}}, "recorder", "echo")
	ctx := ctxFor(t)
	h.StartSubscribers(ctx)
	for _, l := range []plugin.Lifecycle{
		{Type: plugin.WorkflowStarted},
		{Type: plugin.StepStarted, Step: "a", Path: "a"},
		{Type: plugin.StepRetrying, Step: "a", Path: "a", Attempt: 1, MaxAttempts: 2},
		{Type: plugin.StepCompleted, Step: "a", Path: "a"},
		{Type: plugin.StepStarted, Step: "b", Path: "loop.b", Iteration: 2},
		{Type: plugin.StepFailed, Step: "b", Path: "loop.b", Iteration: 2, Error: "boom"},
		{Type: plugin.WorkflowCompleted, Status: "success"},
	} {
		l.RunID, l.Workflow = "run-1", "w"
		h.Publish(l)
	}
	// an event a plugin emits through the host reaches the subscribers;
	// one its manifest does not list is refused
	if res, err := h.Operate(ctx, "echo.emit", map[string]any{"type": "echo.said"}); err != nil || !res.Success {
		t.Errorf("emit: %+v %v", res, err)
	}
	res, err := h.Operate(ctx, "echo.emit", map[string]any{"type": "other.thing"})
	if err != nil || res.Success || !strings.Contains(res.Error, `plugin "echo" not authorized to emit event type "other.thing"`) {
		t.Errorf("unlisted emit: %+v %v", res, err)
	}
	h.Close()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		"workflow.started step= depth=0 source=core status= attempt= path=",
		"step.started step=a depth=0 source=core status= attempt= path=",
		"step.retrying step=a depth=0 source=core status= attempt=1 path=",
		"step.completed step=a depth=0 source=core status= attempt= path=",
		"step.started step=b depth=0 source=core status= attempt= path=loop.b",
		"step.failed step=b depth=0 source=core status= attempt= path=loop.b",
		"workflow.completed step= depth=0 source=core status=success attempt= path=",
	}
	// the emitted events come in their own time; the chain they start
	// stops at AWF's depth limit
	var core, other []string
	for _, l := range lines {
		if strings.Contains(l, "source=core") {
			core = append(core, l)
		} else {
			other = append(other, l)
		}
	}
	if !reflect.DeepEqual(core, want) {
		t.Errorf("lifecycle events:\n%s\nwant\n%s", strings.Join(core, "\n"), strings.Join(want, "\n"))
	}
	wantOther := map[string]bool{
		"echo.said step= depth=0 source=echo status= attempt= path=":          true,
		"recorder.done step= depth=1 source=recorder status= attempt= path=":  true,
		"recorder.chain step= depth=2 source=recorder status= attempt= path=": true,
		"shutdown": true,
	}
	for _, l := range other {
		if !wantOther[l] {
			t.Errorf("unexpected event line %q", l)
		}
		delete(wantOther, l)
	}
	if len(wantOther) > 0 || lines[len(lines)-1] != "shutdown" {
		t.Errorf("missing %v in\n%s", wantOther, b)
	}
	if !strings.Contains(hostLog.String(), "plugin recorder: event recorder.chain not routed: it is 3 events deep (the limit is 3)") {
		t.Errorf("no warning about the propagation limit:\n%s", hostLog)
	}
}

func TestSlowSubscriberDoesNotSlowPublish(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "events.log")
	h, _, hostLog := open(t, plugin.Options{Config: map[string]map[string]any{"recorder": {"log": logPath, "delay": "20ms"}}}, "recorder")
	h.StartSubscribers(ctxFor(t))
	start := time.Now()
	for range 300 {
		h.Publish(plugin.Lifecycle{Type: plugin.StepStarted, Step: "s", Path: "s", RunID: "r"})
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("300 events to a plugin taking 20ms each took %s to publish", d)
	}
	h.Close()
	if !strings.Contains(hostLog.String(), "plugin recorder: its event queue (256) is full") {
		t.Errorf("no warning about the full queue:\n%s", hostLog)
	}
	b, _ := os.ReadFile(logPath)
	if n := strings.Count(string(b), "step.started"); n < 256 || n >= 300 {
		t.Errorf("%d events delivered; want the queue's 256 (and the one being handled), the rest dropped", n)
	}
}

func TestCrashMidOperation(t *testing.T) {
	h, _, _ := open(t, plugin.Options{}, "faulty")
	ctx := ctxFor(t)
	if res, err := h.Operate(ctx, "faulty.ok", nil); err != nil || res.Output != "fine" {
		t.Fatalf("ok: %+v %v", res, err)
	}
	_, err := h.Operate(ctx, "faulty.crash", nil)
	if err == nil || !strings.Contains(err.Error(), "faulty.crash: plugin faulty crashed (exit status 2); its last output: ") ||
		!strings.Contains(err.Error(), "panic: faulty: boom") {
		t.Fatalf("crash: %v", err)
	}
	_, err = h.Operate(ctx, "faulty.ok", nil)
	if err == nil || !strings.Contains(err.Error(), "plugin faulty crashed") {
		t.Errorf("after the crash: %v", err)
	}
}

func TestHungOperation(t *testing.T) {
	h, dir, _ := open(t, plugin.Options{}, "faulty")
	ctx, cancel := context.WithTimeout(ctxFor(t), 3*time.Second)
	defer cancel()
	if errs := h.Start(ctx, "faulty"); len(errs) > 0 {
		t.Fatal(errs)
	}
	octx, ocancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer ocancel()
	start := time.Now()
	_, err := h.Operate(octx, "faulty.hang", nil)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("hang: %v after %s", err, time.Since(start))
	}
	start = time.Now()
	h.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("closing a stuck plugin took %s", d)
	}
	plugintest.NoneLeft(t, dir)
}

func TestWrongHandshake(t *testing.T) {
	h, _, _ := open(t, plugin.Options{}, "badshake")
	_, err := h.Operations(ctxFor(t), "badshake")
	if !errors.Is(err, plugin.ErrUnavailable) || !strings.Contains(err.Error(), "plugin badshake: start: wrong handshake") {
		t.Errorf("handshake: %v", err)
	}
}

func TestNotAPlugin(t *testing.T) {
	dir := t.TempDir()
	pd := filepath.Join(dir, "script")
	os.MkdirAll(pd, 0o755)
	os.WriteFile(filepath.Join(pd, "plugin.yaml"), []byte("name: script\nversion: 1.0.0\nawf_version: '>=0.4.0'\ncapabilities: [operations]\n"), 0o644)
	os.WriteFile(filepath.Join(pd, "awf-plugin-script"), []byte("#!/bin/sh\necho not a plugin; sleep 30\n"), 0o755)
	h := plugin.Open(plugin.Options{Dirs: []string{dir}, StartTimeout: 3 * time.Second})
	defer h.Close()
	_, err := h.Operations(ctxFor(t), "script")
	if !errors.Is(err, plugin.ErrUnavailable) || !strings.Contains(err.Error(), "wrong handshake") {
		t.Errorf("a program that is not a plugin: %v", err)
	}
}

func TestChecksum(t *testing.T) {
	root := t.TempDir()
	st, _ := plugin.LoadState(filepath.Join(root, plugin.StateFile), "")
	h, dir, _ := open(t, plugin.Options{State: st}, "echo")
	bin := filepath.Join(dir, "echo", "awf-plugin-echo")
	sum, err := plugin.FileSHA256(bin)
	if err != nil {
		t.Fatal(err)
	}
	st.SetChecksum("echo", sum)
	f, _ := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("tampered"))
	f.Close()
	_, err = h.Operate(ctxFor(t), "echo.echo", map[string]any{"text": "x"})
	var ce *plugin.ChecksumError
	if !errors.As(err, &ce) && !strings.Contains(err.Error(), "changed since it was installed") {
		t.Fatalf("tampered binary: %v", err)
	}
	if !errors.Is(err, plugin.ErrUnavailable) || !strings.Contains(err.Error(), "plugin echo: start: binary "+bin+" changed since it was installed") {
		t.Errorf("message: %v", err)
	}
	if len(plugintest.Processes(dir)) > 0 {
		t.Error("the tampered binary ran")
	}
}

func TestManifestProblems(t *testing.T) {
	dir := t.TempDir()
	for name, manifest := range map[string]string{
		"noversion": "name: noversion\nawf_version: '>=0.4.0'\ncapabilities: [operations]\n",
		"badcap":    "name: badcap\nversion: 1.0.0\nawf_version: '>=0.4.0'\ncapabilities: [teleport]\n",
		"future":    "name: future\nversion: 1.0.0\nawf_version: '>=9.0.0'\ncapabilities: [operations]\n",
		"nobinary":  "name: nobinary\nversion: 1.0.0\nawf_version: '>=0.4.0'\ncapabilities: [operations]\n",
	} {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		os.WriteFile(filepath.Join(dir, name, "plugin.yaml"), []byte(manifest), 0o644)
		if name == "future" {
			os.WriteFile(filepath.Join(dir, name, "awf-plugin-future"), []byte("#!/bin/sh\n"), 0o755)
		}
	}
	h := plugin.Open(plugin.Options{Dirs: []string{dir}})
	defer h.Close()
	got := map[string]string{}
	for _, in := range h.Installed() {
		if in.Problem != nil {
			got[in.Name] = in.Problem.Error()
		}
	}
	for name, want := range map[string]string{
		"noversion": "version is required",
		"badcap":    `capability "teleport" is not one of operations, step_types, validators, events`,
		"nobinary":  "no executable awf-plugin-nobinary",
	} {
		if !strings.Contains(got[name], want) {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	_, err := h.Operations(ctxFor(t), "future")
	if err == nil || !strings.Contains(err.Error(), "plugin requires AWF >=9.0.0; reel speaks AWF 0.11.0's plugin protocol") {
		t.Errorf("future: %v", err)
	}
}

func TestDisabled(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, plugin.StateFile)
	st, _ := plugin.LoadState(path, "")
	if err := st.SetEnabled("echo", false); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	// AWF's file shape
	b, _ := os.ReadFile(path)
	var raw map[string]map[string]any
	if err := json.Unmarshal(b, &raw); err != nil || raw["echo"]["enabled"] != false || raw["echo"]["disabled_at"] == nil {
		t.Errorf("state file: %s", b)
	}
	st, _ = plugin.LoadState(path, "")
	h, dir, _ := open(t, plugin.Options{State: st}, "echo")
	_, err := h.Operate(ctxFor(t), "echo.echo", map[string]any{"text": "x"})
	if !errors.Is(err, plugin.ErrUnavailable) || err.Error() != "plugin echo is disabled (reel plugin enable echo)" {
		t.Errorf("disabled: %v", err)
	}
	if len(plugintest.Processes(dir)) > 0 {
		t.Error("a disabled plugin ran")
	}
	// the project file decides over the state file
	proj := filepath.Join(root, "plugins.yaml")
	os.WriteFile(proj, []byte("echo:\n  enabled: true\n"), 0o644)
	st, _ = plugin.LoadState(path, proj)
	if !st.Enabled("echo") {
		t.Error("plugins.yaml enabled: true")
	}
	if err := st.SetEnabled("echo", false); err == nil || !strings.Contains(err.Error(), "plugins.yaml:1; change it there") {
		t.Errorf("SetEnabled against the project file: %v", err)
	}
}

func TestMatchPattern(t *testing.T) {
	// through the bus: a subscriber with each pattern
	for _, c := range []struct {
		pattern, typ string
		match        bool
	}{
		{"workflow.started", "workflow.started", true},
		{"workflow.started", "workflow.completed", false},
		{"workflow.*", "workflow.failed", true},
		{"workflow.*", "workflow.step.started", false},
		{"*.*", "step.started", true},
		{"*.*", "workflow", false},
		{"*", "workflow", true},
		{"*", "step.started", true},
		{"deploy.*", "system.deploy.complete", false},
		{"", "x", false},
	} {
		if got := plugin.MatchPattern(c.pattern, c.typ); got != c.match {
			t.Errorf("%q ~ %q = %v", c.pattern, c.typ, got)
		}
	}
}
