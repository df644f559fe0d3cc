package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/index"

	"github.com/reelhq/reel/internal/exitcode"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
)

func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

var transcriptLine = regexp.MustCompile(`(?m)^transcript (\S+)$`)

// Every step kind, end to end through the built binary.
func TestRunEveryStepKindThroughBinary(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()
	writeFile(t, filepath.Join(dir, "fake-claude"), "#!/bin/sh\ncat <<'X'\n"+
		`{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","tools":["Bash"]}`+"\n"+
		`{"type":"assistant","session_id":"s1","message":{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":10,"output_tokens":2}}}`+"\n"+
		`{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"done","session_id":"s1","usage":{"input_tokens":10,"output_tokens":2}}`+"\nX\n", 0o755)
	writeFile(t, filepath.Join(dir, "plugins", "stamp"), "#!/bin/sh\ncat >/dev/null\necho '{\"output\":\"stamped\"}'\n", 0o755)
	writeFile(t, filepath.Join(dir, ".reel", "config.yaml"), "plugins:\n  stamp:\n    command: ./plugins/stamp\n", 0o644)
	writeFile(t, filepath.Join(dir, ".reel", "workflows", "child.yaml"), "name: child\nstates:\n  initial: c\n  c: {type: step, command: 'echo child'}\n", 0o644)
	writeFile(t, filepath.Join(dir, "all.yaml"), fmt.Sprintf(`
name: all-kinds
inputs: [{name: n, type: integer, default: "2"}]
states:
  initial: cmd
  cmd: {type: step, command: 'echo hi', on_success: fan}
  fan: {type: parallel, parallel: [each, spin], on_success: http}
  each: {type: for_each, items: '["a","b"]', body: [item]}
  item: {type: step, command: 'echo {{.loop.Item}}'}
  spin: {type: while, while: 'loop.Index < inputs.n', body: [tick]}
  tick: {type: step, command: 'true'}
  http:
    type: operation
    operation: http.request
    inputs: {url: %q}
    on_success: sub
  sub: {type: call_workflow, workflow: child, on_success: custom}
  custom: {type: stamp, config: {k: v}, on_success: ai}
  ai:
    type: agent
    provider: claude
    prompt: 'say done'
    options: {command: ./fake-claude}
    on_success: end
  end: {type: terminal, message: '{{.states.custom.Output}} {{.states.ai.Output}}'}
`, srv.URL), 0o644)
	storage := filepath.Join(dir, "store")
	res := runBinary(t, dir, "run", "all.yaml", "--storage", storage, "--input", "n=3")
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, "■ stamped done") {
		t.Errorf("display:\n%s", res.stdout)
	}
	m := transcriptLine.FindStringSubmatch(res.stderr)
	if m == nil || !regexp.MustCompile(`(?m)^run [0-9a-f-]{36}$`).MatchString(res.stderr) {
		t.Fatalf("stderr lacks run id / transcript path:\n%s", res.stderr)
	}
	verifyStorage(t, storage)
	evs, err := transcript.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	ticks := 0
	for _, e := range evs {
		if e.Type == transcript.StepStarted {
			kinds[e.Step().Kind] = true
			if e.Path == "fan.spin.tick" {
				ticks++
			}
		}
	}
	var got []string
	for k := range kinds {
		got = append(got, k)
	}
	sort.Strings(got)
	if want := "agent call_workflow command for_each operation parallel stamp terminal while"; strings.Join(got, " ") != want {
		t.Fatalf("kinds %v, want %s", got, want)
	}
	if ticks != 3 {
		t.Fatalf("while ran %d times with n=3", ticks)
	}

	// reel runs lists both runs, the child marked
	runs := runBinary(t, dir, "runs", "--storage", storage, "--json")
	var list []index.Run
	if err := json.Unmarshal([]byte(runs.stdout), &list); err != nil || len(list) != 2 {
		t.Fatalf("runs --json: %v\n%s", err, runs.stdout)
	}
	for _, r := range list {
		if r.Status != "success" || (r.Workflow == "all-kinds") == (r.ParentRunID != "") {
			t.Fatalf("run %+v", r)
		}
		if r.Workflow == "all-kinds" && r.Tokens != 12 {
			t.Fatalf("tokens %d", r.Tokens)
		}
	}
	table := runBinary(t, dir, "runs", "--storage", storage)
	if !strings.Contains(table.stdout, "all-kinds") || !strings.Contains(table.stdout, "↳ child") {
		t.Fatalf("runs table:\n%s", table.stdout)
	}
}

func TestRunByNameFailureAndNoTranscript(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".reel", "workflows", "fails.yaml"), `
name: fails
states:
  initial: a
  a: {type: step, command: 'echo out; exit 4', on_success: b}
  b: {type: terminal}
`, 0o644)
	var displays []string
	for _, flag := range []string{"", "--no-transcript"} {
		storage := filepath.Join(dir, "s"+flag)
		args := []string{"run", "fails", "--storage", storage}
		if flag != "" {
			args = append(args, flag)
		}
		res := runBinary(t, dir, args...)
		if res.code != exitcode.Execution {
			t.Fatalf("%s: exit %d, want %d\n%s%s", flag, res.code, exitcode.Execution, res.stdout, res.stderr)
		}
		_, err := os.Stat(filepath.Join(storage, "transcripts"))
		if (flag == "") != (err == nil) {
			t.Fatalf("%s: transcripts dir err %v", flag, err)
		}
		if flag == "" {
			verifyStorage(t, storage)
		} else if strings.Contains(res.stderr, "transcript ") {
			t.Fatalf("--no-transcript printed a transcript path:\n%s", res.stderr)
		}
		displays = append(displays, regexp.MustCompile(`\(\d+ms\)`).ReplaceAllString(res.stdout, "(d)"))
	}
	if displays[0] != displays[1] {
		t.Fatalf("display differs with --no-transcript:\n%s\n---\n%s", displays[0], displays[1])
	}
	if res := runBinary(t, dir, "run", "nosuch"); res.code != exitcode.User || !strings.Contains(res.stderr, "workflow not found") {
		t.Fatalf("missing workflow: %+v", res)
	}
	// an input the workflow does not declare is ignored, as AWF ignores
	// it, with a warning
	if res := runBinary(t, dir, "run", "fails", "--input", "x=1", "--input", "x=2"); res.code != exitcode.Execution || !strings.Contains(res.stderr, "warning: --input x: workflow fails declares no such input: ignored") {
		t.Fatalf("undeclared input: %+v", res)
	}
}

// SIGINT stops the running command and still writes run.completed.
func TestRunSignalWritesRunCompleted(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "slow.yaml"), "name: slow\nstates:\n  initial: s\n  s: {type: step, command: 'touch started; sleep 30'}\n", 0o644)
	storage := filepath.Join(dir, "st")
	cmd := exec.Command(reelBinary(t), "run", "slow.yaml", "--storage", storage)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("step never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if time.Since(start) > 5*time.Second {
		t.Fatal("SIGINT did not stop the run promptly")
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v\n%s", err, errb.String())
	}
	verifyStorage(t, storage)
	m := transcriptLine.FindStringSubmatch(errb.String())
	evs, err := transcript.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Type != transcript.RunCompleted || last.Step().Error != "cancelled: received SIGINT" {
		t.Fatalf("last event %+v", last)
	}
}

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.yaml"), "name: b\nstates:\n  initial: a\n  a:\n    type: step\n    command: 'true'\n    on_success: nowhere\n    timout: 3\n", 0o644)
	writeFile(t, filepath.Join(dir, "good.yaml"), "name: g\nstates:\n  initial: a\n  a: {type: terminal}\n", 0o644)
	writeFile(t, filepath.Join(dir, "call.yaml"), "name: c\nstates:\n  initial: a\n  a: {type: call_workflow, workflow: ghost}\n", 0o644)
	res := runBinary(t, dir, "validate", "bad.yaml", "call.yaml", "good.yaml")
	lines := strings.Split(res.stdout, "\n")
	want := []string{
		"bad.yaml:4:3: state \"a\" on_success: unknown state \"nowhere\"",
		"bad.yaml:8:5: unknown field \"timout\" in step state \"a\" (did you mean \"timeout\"?)",
		"call.yaml:4:3: state \"a\": call_workflow: workflow not found: \"ghost\" (looked in ",
		"good.yaml: ok",
		"",
	}
	if res.code != exitcode.Workflow || len(lines) != len(want) {
		t.Fatalf("exit %d\n%s", res.code, res.stdout)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || (i != 2 && lines[i] != w) {
			t.Fatalf("line %d = %q, want %q", i+1, lines[i], w)
		}
	}
	if res := runBinary(t, dir, "validate", "good.yaml"); res.code != 0 {
		t.Fatalf("good: %+v", res)
	}
	if res := runBinary(t, dir, "validate", "nosuch"); res.code != exitcode.User || !strings.Contains(res.stdout, "workflow not found") {
		t.Fatalf("missing: %+v", res)
	}

	// A warning leaves the file valid, unless --strict.
	writeFile(t, filepath.Join(dir, "self.yaml"), "name: w\nstates:\n  initial: a\n  a:\n    type: step\n    command: 'echo {{.states.a.Output}}'\n", 0o644)
	res = runBinary(t, dir, "validate", "self.yaml")
	if res.code != exitcode.Workflow || !strings.Contains(res.stdout, `self.yaml:6:14: state "a" command: {{.states.a.Output}}: a state cannot read its own result before it has run`) {
		t.Fatalf("own result: %+v", res)
	}
	writeFile(t, filepath.Join(dir, "warn.yaml"), "name: w\nstates:\n  initial: a\n  a:\n    type: step\n    when: 'false'\n    command: 'true'\n    transitions:\n      - {when: 'states.b.Output == \"x\"', goto: a}\n", 0o644)
	wantOut := `warn.yaml:6:5: warning: step state "a": "when" is ignored`
	res = runBinary(t, dir, "validate", "warn.yaml")
	if res.code != 0 || !strings.Contains(res.stdout, wantOut) || !strings.Contains(res.stdout, `warn.yaml:9:16: warning: state "a" transition: states.b.Output: unknown state "b"`) || !strings.HasSuffix(res.stdout, "warn.yaml: ok\n") {
		t.Fatalf("warnings: %+v", res)
	}
	res = runBinary(t, dir, "validate", "--strict", "warn.yaml")
	if res.code != exitcode.Workflow || strings.Contains(res.stdout, ": ok") || !strings.Contains(res.stdout, wantOut) {
		t.Fatalf("--strict: %+v", res)
	}
}

// The README's first command: the bundled demo runs from the repo root
// with no agent CLI installed.
func TestBundledDemo(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	storage := t.TempDir()
	res := runBinary(t, root, "run", "examples/demo.yaml", "--storage", storage)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	verifyStorage(t, storage)
	for _, want := range []string{"each_file.inspect [2]", "checks.lint", "● summarize success", "verdict: main.go is small", "■ demo finished"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("demo display lacks %q:\n%s", want, res.stdout)
		}
	}
	if res := runBinary(t, root, "validate", "examples/demo.yaml", "examples/summarize.yaml"); res.code != 0 {
		t.Fatalf("validate demo: %s", res.stdout)
	}
}

const (
	// maskEnvSecret is not a key shape: only the environment rule finds it.
	maskEnvSecret = "zq8-env-secret-value-4711"
	// maskShapeSecret is in no environment: only the shape rule finds it.
	maskShapeSecret = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
	// maskFileSecret is written in testdata/mask/leak.yaml.
	maskFileSecret = "sk-ant-api03-AAAABBBBCCCCDDDDEEEE"
)

var maskNormalize = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`), "<id>"},
	{regexp.MustCompile(`"time":"[^"]*"`), `"time":"<t>"`},
	{regexp.MustCompile(`"duration_ms":\d+`), `"duration_ms":<d>`},
	{regexp.MustCompile(`\((\d+ms|\d+\.\ds|[0-9hms]+)\)`), "(<d>)"},
}

func normalizeRun(s string) string {
	for _, n := range maskNormalize {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// --mask-secrets masks the display (stdout), the audit trail and the
// transcripts (parent and child) of the real binary, and what it says on
// stderr about bad inputs; without it every secret is there.
func TestRunMaskSecrets(t *testing.T) {
	t.Setenv("REEL_TEST_API_KEY", maskEnvSecret)
	wf, err := filepath.Abs(filepath.Join("testdata", "mask", "leak.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	planted := []string{maskEnvSecret, maskShapeSecret, maskFileSecret}
	type result struct{ stdout, audit string }
	got := map[string]result{}
	for _, mode := range []string{"plain", "mask", "mask-no-transcript"} {
		storage := filepath.Join(dir, mode)
		args := []string{"run", wf, "--storage", storage, "--input", "tok=" + maskShapeSecret}
		mask := mode != "plain"
		if mask {
			args = append(args, "--mask-secrets")
		}
		if mode == "mask-no-transcript" {
			args = append(args, "--no-transcript")
		}
		res := runBinary(t, dir, args...)
		if res.code != 3 {
			t.Fatalf("%s: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", mode, res.code, res.stdout, res.stderr)
		}
		audit, err := os.ReadFile(filepath.Join(storage, "audit.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		written := map[string]string{"stdout": res.stdout, "audit.jsonl": string(audit)}
		files, _ := filepath.Glob(filepath.Join(storage, "transcripts", "*.jsonl"))
		if mode == "mask-no-transcript" {
			if len(files) != 0 {
				t.Fatalf("--no-transcript wrote %v", files)
			}
		} else {
			if len(files) != 2 {
				t.Fatalf("%s: transcripts %v, want parent and child", mode, files)
			}
			verifyStorage(t, storage)
			var all []byte
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, b...)
			}
			written["transcripts"] = string(all)
		}
		for name, text := range written {
			for _, secret := range planted {
				if leaked := strings.Contains(text, secret); leaked == mask && (mask || name != "audit.jsonl" || secret != maskFileSecret) {
					t.Errorf("%s: %s contains %s = %v:\n%s", mode, name, secret, leaked, text)
				}
			}
			if masked := strings.Contains(text, secrets.Masked); masked != mask {
				t.Errorf("%s: %s contains %s = %v:\n%s", mode, name, secrets.Masked, masked, text)
			}
		}
		if strings.Contains(res.stderr, maskEnvSecret) || strings.Contains(res.stderr, maskShapeSecret) {
			t.Errorf("%s: stderr shows a secret:\n%s", mode, res.stderr)
		}
		got[mode] = result{normalizeRun(res.stdout), normalizeRun(string(audit))}
	}

	// masking replaces the secrets and nothing else, with or without the
	// transcript
	r := strings.NewReplacer(maskEnvSecret, secrets.Masked, maskShapeSecret, secrets.Masked, maskFileSecret, secrets.Masked)
	for _, mode := range []string{"mask", "mask-no-transcript"} {
		if want := r.Replace(got["plain"].stdout); got[mode].stdout != want {
			t.Errorf("%s stdout:\n%s\nwant:\n%s", mode, got[mode].stdout, want)
		}
		if want := r.Replace(got["plain"].audit); got[mode].audit != want {
			t.Errorf("%s audit:\n%s\nwant:\n%s", mode, got[mode].audit, want)
		}
	}
	for _, want := range []string{
		"leak │ key=[MASKED] shape=[MASKED]",
		"fails │ warn [MASKED]",
		"  c │ child sees [MASKED]",
		"■ child done with [MASKED]",
		"✘ fails (<d>): exit status 3: rejected [MASKED] with [MASKED]",
		"● mask-secrets failure (<d>): state \"fails\" failed: exit status 3: rejected [MASKED] with [MASKED]",
	} {
		if !strings.Contains(got["mask"].stdout, want) {
			t.Errorf("masked display lacks %q:\n%s", want, got["mask"].stdout)
		}
	}

	// what reel says about bad inputs is masked too
	for _, c := range []struct{ input, want string }{
		{"n=" + maskShapeSecret, `input "n": "[MASKED]" is not an integer`},
		{maskShapeSecret, `--input "[MASKED]": want key=value`},
	} {
		for _, mask := range []bool{false, true} {
			args := []string{"run", wf, "--storage", filepath.Join(dir, "bad"), "--input", c.input}
			if mask {
				args = append(args, "--mask-secrets")
			}
			res := runBinary(t, dir, args...)
			if res.code != exitcode.User {
				t.Fatalf("--input %s: exit %d\n%s", c.input, res.code, res.stderr)
			}
			want := c.want
			if !mask {
				want = strings.ReplaceAll(want, secrets.Masked, maskShapeSecret)
			}
			if !strings.Contains(res.stderr, want) {
				t.Errorf("--input %s mask=%v: stderr lacks %q:\n%s", c.input, mask, want, res.stderr)
			}
		}
	}
}
