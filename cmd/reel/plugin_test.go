package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/reelhq/reel/internal/plugin/plugintest"
	"github.com/reelhq/reel/transcript"
)

// pluginProject is a project whose .awf/plugins holds reel's test plugins,
// with its own data directory (AWF's state file) and storage.
type pluginProject struct {
	root, plugins, data, storage string
	env                          []string
}

func newPluginProject(t *testing.T, names ...string) *pluginProject {
	t.Helper()
	root := t.TempDir()
	p := &pluginProject{root: root, plugins: filepath.Join(root, ".awf", "plugins"), data: filepath.Join(root, "data"), storage: filepath.Join(root, "storage")}
	for _, n := range names {
		plugintest.Install(t, p.plugins, n)
	}
	os.MkdirAll(filepath.Join(root, ".awf", "workflows"), 0o755)
	p.env = append(os.Environ(), "REEL_STORAGE="+p.storage, "XDG_DATA_HOME="+p.data, "AWF_PLUGINS_PATH=", "GITHUB_TOKEN=", "NO_COLOR=1")
	t.Cleanup(func() { plugintest.NoneLeft(t, p.plugins) })
	return p
}

func (p *pluginProject) write(t *testing.T, name, content string) {
	t.Helper()
	path := filepath.Join(p.root, name)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (p *pluginProject) reel(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runBinaryEnv(t, p.root, p.env, args...)
}

var runIDRE = regexp.MustCompile(`(?m)^run ([0-9a-f-]{36})$`)

// steps reads a run's step.completed payloads by state name (the last
// execution of each).
func (p *pluginProject) steps(t *testing.T, r cliResult) map[string]*transcript.StepPayload {
	t.Helper()
	m := runIDRE.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no run id in:\n%s", r.stderr)
	}
	verifyStorage(t, p.storage)
	events, err := transcript.ReadFile(filepath.Join(p.storage, "transcripts", m[1]+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*transcript.StepPayload{}
	for i := range events {
		if events[i].Type == transcript.StepCompleted {
			out[events[i].Step().Name] = events[i].Step()
		}
	}
	return out
}

func result(t *testing.T, p *transcript.StepPayload) map[string]any {
	t.Helper()
	var m map[string]any
	if err := transcript.DecodeResult(p.Result, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const pluginWorkflow = `name: plugins
version: "1.0"
inputs:
  - name: who
    default: ann
states:
  initial: say
  say:
    type: operation
    operation: echo.echo
    inputs:
      text: "{{.inputs.who}}"
      prefix: "hi "
      repeat: "{{len .inputs.who}}"
    on_success: said
  said:
    type: step
    command: 'printf "%s|%s|%s" "{{.states.say.Response.output}}" "{{.states.say.Response.repeat}}" "{{.states.say.Output}}"'
    on_success: create
  create:
    type: operation
    operation: db.exec
    inputs:
      sql: CREATE TABLE people (name TEXT)
    on_success: insert
  insert:
    type: operation
    operation: db.exec
    inputs:
      sql: INSERT INTO people (name) VALUES (?), (?)
      args: ["{{.inputs.who}}", bob]
    on_success: count
  count:
    type: operation
    operation: db.query
    inputs:
      sql: SELECT count(*) AS n FROM people
    on_success: greet
  greet:
    type: steps.greet
    config:
      name: "{{.inputs.who}} ({{index .states.count.Response.rows 0 \"n\"}} people)"
    on_success: exit
  exit:
    type: steps.exit
    config:
      code: 4
    transitions:
      - when: states.exit.ExitCode == 4
        goto: show
    on_failure: bad
  show:
    type: step
    command: 'echo "{{.states.greet.Output}}/{{.states.greet.Data.state}}"'
    on_success: done
  bad:
    type: terminal
    status: failure
  done:
    type: terminal
`

func TestPluginRun(t *testing.T) {
	t.Parallel()
	p := newPluginProject(t, "echo", "db", "steps", "recorder")
	p.write(t, ".awf/config.yaml", "plugins:\n  db:\n    database: ${DB_DIR}/people.db\n  recorder:\n    log: events.log\n")
	p.write(t, ".awf/workflows/plugins.yaml", pluginWorkflow)
	p.env = append(p.env, "DB_DIR="+p.root)
	r := p.reel(t, "run", "plugins")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	steps := p.steps(t, r)
	say := result(t, steps["say"])
	if steps["say"].Kind != transcript.KindOperation || say["plugin"] != "echo" || say["operation"] != "echo.echo" || say["success"] != true ||
		say["inputs"].(map[string]any)["repeat"] != 3.0 || say["outputs"].(map[string]any)["output"] != "hi annhi annhi ann" {
		t.Errorf("say recorded %v", say)
	}
	if out := result(t, steps["said"])["output"]; out != "hi annhi annhi ann|3|length=18\noutput=hi annhi annhi ann\nrepeat=3\ntext=ann" {
		t.Errorf("said: %q", out)
	}
	if got := result(t, steps["count"])["outputs"]; got.(map[string]any)["count"] != 1.0 {
		t.Errorf("count: %v", got)
	}
	greet := result(t, steps["greet"])
	if steps["greet"].Kind != "steps.greet" || greet["output"] != "hello ann (2 people)" || greet["config"].(map[string]any)["name"] != "ann (2 people)" {
		t.Errorf("greet: %v", greet)
	}
	if steps["exit"].Error == "" || result(t, steps["exit"])["exit_code"] != 4.0 {
		t.Errorf("exit: %+v", steps["exit"])
	}
	if out := result(t, steps["show"])["output"]; out != "hello ann (2 people)/greet\n" {
		t.Errorf("show: %q", out)
	}
	// the database is a real SQLite file
	db, err := sql.Open("sqlite", filepath.Join(p.root, "people.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM people").Scan(&n); err != nil || n != 2 {
		t.Errorf("people: %d %v", n, err)
	}
	// the event plugin heard the run in order, and was shut down last
	b, err := os.ReadFile(filepath.Join(p.root, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	var core []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(l, "source=core") {
			f := strings.Fields(l)
			core = append(core, f[0]+" "+strings.TrimPrefix(f[1], "step="))
		}
	}
	var want []string
	want = append(want, "workflow.started ")
	for _, s := range []string{"say", "said", "create", "insert", "count", "greet"} {
		want = append(want, "step.started "+s, "step.completed "+s)
	}
	want = append(want, "step.started exit", "step.failed exit", "step.started show", "step.completed show", "workflow.completed ")
	if strings.Join(core, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(core, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasSuffix(strings.TrimSpace(string(b)), "shutdown") {
		t.Errorf("the recorder was not shut down last:\n%s", b)
	}
}

func TestPluginFaults(t *testing.T) {
	t.Parallel()
	p := newPluginProject(t, "faulty", "badshake", "echo")
	p.write(t, ".awf/workflows/crash.yaml", "name: crash\nstates:\n  initial: c\n  c:\n    type: operation\n    operation: faulty.crash\n    on_success: done\n    on_failure: handled\n  handled:\n    type: step\n    command: echo handled\n    on_success: done\n  done:\n    type: terminal\n")
	p.write(t, ".awf/workflows/hang.yaml", "name: hang\nstates:\n  initial: h\n  h:\n    type: operation\n    operation: faulty.hang\n    timeout: 1s\n    on_success: done\n  done:\n    type: terminal\n")
	p.write(t, ".awf/workflows/shake.yaml", "name: shake\nstates:\n  initial: s\n  s:\n    type: operation\n    operation: badshake.anything\n    on_success: done\n    on_failure: done\n  done:\n    type: terminal\n")
	p.write(t, ".awf/workflows/echo.yaml", "name: echo\nstates:\n  initial: e\n  e:\n    type: operation\n    operation: echo.echo\n    inputs:\n      text: x\n    on_success: done\n    on_failure: done\n  done:\n    type: terminal\n")

	// a crash mid-operation fails the state (its on_failure runs), names
	// the plugin and what it printed
	r := p.reel(t, "run", "crash")
	steps := p.steps(t, r)
	if r.code != 0 || !strings.Contains(steps["c"].Error, "faulty.crash: plugin faulty crashed (exit status 2)") || !strings.Contains(steps["c"].Error, "panic: faulty: boom") || steps["handled"] == nil {
		t.Errorf("crash: exit %d, c: %q\n%s", r.code, steps["c"].Error, r.stderr)
	}

	// a plugin that never answers: the state's timeout ends it
	start := time.Now()
	r = p.reel(t, "run", "hang")
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("hang took %s", d)
	}
	steps = p.steps(t, r)
	if r.code != 3 || steps["h"].Error != "timed out after 1s" || result(t, steps["h"]) == nil {
		t.Errorf("hang: exit %d, h: %+v\n%s", r.code, steps["h"], r.stderr)
	}

	// a wrong handshake ends the run at its state, naming the plugin
	r = p.reel(t, "run", "shake")
	steps = p.steps(t, r)
	if r.code != 3 || !strings.Contains(steps["s"].Error, "plugin badshake: start: wrong handshake") || steps["done"] != nil {
		t.Errorf("handshake: exit %d, s: %q\n%s", r.code, steps["s"].Error, r.stderr)
	}
	if !strings.Contains(r.stderr, "plugin badshake: start: wrong handshake") {
		t.Errorf("the pre-run check did not warn about badshake:\n%s", r.stderr)
	}

	// a binary changed since its checksum was stored is refused
	if r := p.reel(t, "plugin", "verify", "--update", "echo"); r.code != 0 || !strings.Contains(r.stdout, "updated") {
		t.Fatalf("verify --update: %+v", r)
	}
	bin := filepath.Join(p.plugins, "echo", "awf-plugin-echo")
	f, _ := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{0})
	f.Close()
	r = p.reel(t, "run", "echo")
	steps = p.steps(t, r)
	if r.code != 3 || !strings.Contains(steps["e"].Error, "plugin echo: start: binary "+bin+" changed since it was installed") {
		t.Errorf("tampered: exit %d, e: %q", r.code, steps["e"].Error)
	}
	if len(plugintest.Processes(p.plugins)) > 0 {
		t.Error("processes left")
	}
	if r := p.reel(t, "plugin", "verify"); r.code != 1 || !strings.Contains(r.stdout, "fail") {
		t.Errorf("verify after tampering: %+v", r)
	}
}

func TestPluginCtrlC(t *testing.T) {
	t.Parallel()
	p := newPluginProject(t, "faulty", "recorder")
	p.write(t, ".awf/config.yaml", "plugins:\n  recorder:\n    log: events.log\n")
	p.write(t, ".awf/workflows/hang.yaml", "name: hang\nstates:\n  initial: h\n  h:\n    type: operation\n    operation: faulty.hang\n    on_success: done\n  done:\n    type: terminal\n")
	cmd := newBinaryCmd(t, p.root, p.env, "run", "hang")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(plugintest.Processes(p.plugins)) < 2 || !strings.Contains(readFile(t, filepath.Join(p.root, "events.log")), "step.started") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the plugins did not start:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(interface{ ExitCode() int }); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit: %v\n%s", err, stderr.String())
	}
	log := readFile(t, filepath.Join(p.root, "events.log"))
	if !strings.Contains(log, "step.failed step=h") || !strings.Contains(log, "workflow.failed") || !strings.HasSuffix(strings.TrimSpace(log), "shutdown") {
		t.Errorf("events after Ctrl-C:\n%s", log)
	}
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

const unsafeWorkflow = `name: unsafe
states:
  initial: wipe
  wipe:
    type: step
    command: rm -rf /tmp/reel-never-such-dir/
    timeout: 5s
    on_success: done
  done:
    type: terminal
`

const safeWorkflow = `name: safe
version: "1"
states:
  initial: hello
  hello:
    type: step
    command: echo hello
    on_success: done
  done:
    type: terminal
`

func TestPluginValidators(t *testing.T) {
	t.Parallel()
	p := newPluginProject(t, "policy")
	p.write(t, ".awf/workflows/unsafe.yaml", unsafeWorkflow)
	p.write(t, ".awf/workflows/safe.yaml", safeWorkflow)
	r := p.reel(t, "validate", "unsafe")
	if r.code != 2 || !strings.Contains(r.stdout, "unsafe.yaml:4:3: state wipe: command: destructive command (plugin policy)") ||
		!strings.Contains(r.stdout, "unsafe.yaml:1:1: warning: workflow has no version (plugin policy)") {
		t.Errorf("validate unsafe: %+v", r)
	}
	r = p.reel(t, "validate", "safe")
	if r.code != 0 || !strings.Contains(r.stdout, "safe.yaml:5:3: warning: state hello: timeout: command has no timeout (plugin policy)") || !strings.Contains(r.stdout, "safe.yaml: ok") {
		t.Errorf("validate safe: %+v", r)
	}
	r = p.reel(t, "validate", "--json", "unsafe")
	var v []validated
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || len(v) != 1 || v[0].Valid || len(v[0].Problems) != 1 || len(v[0].Warnings) != 1 {
		t.Errorf("validate --json: %v %+v", err, v)
	}
	if r := p.reel(t, "validate", "--skip-plugins", "unsafe"); r.code != 0 || strings.Contains(r.stdout, "policy") {
		t.Errorf("validate --skip-plugins: %+v", r)
	}
	// before run: refused, nothing recorded
	r = p.reel(t, "run", "unsafe")
	if r.code != 2 || !strings.Contains(r.stderr, "destructive command (plugin policy)") || runIDRE.MatchString(r.stderr) {
		t.Errorf("run unsafe: %+v", r)
	}
	if r := p.reel(t, "run", "safe"); r.code != 0 || !strings.Contains(r.stderr, "warning: state hello: timeout: command has no timeout") {
		t.Errorf("run safe: %+v", r)
	}
	if r := p.reel(t, "run", "unsafe", "--skip-plugins"); r.code != 0 {
		t.Errorf("run unsafe --skip-plugins: %+v", r)
	}
}

// newBinaryCmd is the reel binary, ready to start in dir with env.
func newBinaryCmd(t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(reelBinary(t), args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}
