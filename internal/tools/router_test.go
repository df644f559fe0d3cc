package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/transcript"
)

// recorder collects emitted events and checks each one encodes as a valid
// transcript line, as the real recorder would require.
type recorder struct {
	t      *testing.T
	mu     sync.Mutex
	events []transcript.ExchangeEvent
}

func (r *recorder) emit(e transcript.ExchangeEvent) error {
	r.t.Helper()
	e.RunID = "6f1c3a52-8d5e-4b7a-9c3e-2f4d5a6b7c8d"
	e.Seq = uint64(len(r.events) + 1)
	if _, err := transcript.AppendEvent(nil, &e); err != nil {
		r.t.Errorf("event %s does not encode: %v", e.Type, err)
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	return nil
}

type sandbox struct {
	dir     string // the working directory
	outside string // a sibling directory the tools must not reach
	router  *Router
	rec     *recorder
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	base := t.TempDir()
	s := &sandbox{dir: filepath.Join(base, "work"), outside: filepath.Join(base, "outside"), rec: &recorder{t: t}}
	for _, d := range []string{s.dir, s.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testfixtures.WriteFile(t, filepath.Join(s.outside, "secret.txt"), "top secret\n")
	testfixtures.WriteFile(t, filepath.Join(s.dir, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	testfixtures.WriteFile(t, filepath.Join(s.dir, "pkg", "a", "a.go"), "package a\n\n// Hello says hello.\nfunc Hello() {}\n")
	testfixtures.WriteFile(t, filepath.Join(s.dir, "notes.txt"), "line one\nline two\nline three\n")
	// Escapes: a relative symlink to a file outside, one to the outside
	// directory, and an absolute one.
	if err := os.Symlink("../outside/secret.txt", filepath.Join(s.dir, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(s.dir, "outdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(s.outside, "secret.txt"), filepath.Join(s.dir, "abs-leak.txt")); err != nil {
		t.Fatal(err)
	}
	r, err := NewRouter(s.dir, s.rec.emit, Options{BashTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.router = r
	return s
}

func (s *sandbox) call(t *testing.T, name string, input string) (any, error) {
	t.Helper()
	return s.router.Call(context.Background(), name, "call_"+name, json.RawMessage(input))
}

func TestCallRecordsOnePairWithRouterFidelity(t *testing.T) {
	s := newSandbox(t)
	out, err := s.call(t, "Read", `{"file_path":"notes.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	if out != "line one\nline two\nline three\n" {
		t.Fatalf("output = %q", out)
	}
	_, err = s.call(t, "Read", `{"file_path":"missing.txt"}`)
	if err == nil {
		t.Fatal("reading a missing file succeeded")
	}
	ev := s.rec.events
	if len(ev) != 4 {
		t.Fatalf("got %d events, want 4", len(ev))
	}
	for i, want := range []transcript.EventType{transcript.ToolCall, transcript.ToolResult, transcript.ToolCall, transcript.ToolResult} {
		p := ev[i].Tool()
		if ev[i].Type != want || p == nil || p.Fidelity != transcript.FidelityRouter || p.CallID != "call_Read" || p.Name != "Read" {
			t.Fatalf("event %d = %s %+v", i, ev[i].Type, p)
		}
	}
	if ev[1].Tool().Error != "" || ev[1].Tool().Output != out {
		t.Errorf("first result = %+v", ev[1].Tool())
	}
	if !strings.Contains(ev[3].Tool().Error, "missing.txt") {
		t.Errorf("second result error = %q", ev[3].Tool().Error)
	}
}

func TestMalformedArgumentsAreRecordedAsSent(t *testing.T) {
	s := newSandbox(t)
	_, err := s.call(t, "Read", `{"file_path": `)
	if err == nil || !strings.Contains(err.Error(), "invalid arguments") {
		t.Fatalf("err = %v", err)
	}
	if in := s.rec.events[0].Tool().Input; in != `{"file_path": ` {
		t.Errorf("recorded input = %#v", in)
	}
	_, err = s.call(t, "Rm", `{}`)
	if !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("unknown tool err = %v", err)
	}
	if len(s.rec.events) != 4 {
		t.Errorf("unknown tool still records its pair: got %d events", len(s.rec.events))
	}
}

func TestRecordFailureStopsTheCall(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRouter(dir, func(transcript.ExchangeEvent) error { return errors.New("disk full") }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Call(context.Background(), "Write", "c1", json.RawMessage(`{"file_path":"x","content":"y"}`))
	if !errors.Is(err, ErrRecord) {
		t.Fatalf("err = %v, want ErrRecord", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("the tool ran although its call could not be recorded")
	}
}

// Every tool that takes a path refuses paths leaving the working directory,
// lexically, absolutely, and through symlinks.
func TestConfinement(t *testing.T) {
	s := newSandbox(t)
	secret := filepath.Join(s.outside, "secret.txt")
	cases := []struct{ tool, input string }{
		{"Read", `{"file_path":"../outside/secret.txt"}`},
		{"Read", `{"file_path":"` + secret + `"}`},
		{"Read", `{"file_path":"leak.txt"}`},
		{"Read", `{"file_path":"abs-leak.txt"}`},
		{"Read", `{"file_path":"outdir/secret.txt"}`},
		{"Read", `{"file_path":"pkg/../../outside/secret.txt"}`},
		{"Write", `{"file_path":"../outside/new.txt","content":"x"}`},
		{"Write", `{"file_path":"` + filepath.Join(s.outside, "new.txt") + `","content":"x"}`},
		{"Write", `{"file_path":"outdir/new.txt","content":"x"}`},
		{"Write", `{"file_path":"leak.txt","content":"overwritten"}`},
		{"Edit", `{"file_path":"leak.txt","old_string":"top","new_string":"no"}`},
		{"Edit", `{"file_path":"../outside/secret.txt","old_string":"top","new_string":"no"}`},
		{"Edit", `{"file_path":"outdir/secret.txt","old_string":"top","new_string":"no"}`},
		{"Glob", `{"pattern":"*","path":".."}`},
		{"Glob", `{"pattern":"*","path":"outdir"}`},
		{"Glob", `{"pattern":"*","path":"` + s.outside + `"}`},
		{"Grep", `{"pattern":"secret","path":"leak.txt"}`},
		{"Grep", `{"pattern":"secret","path":"outdir"}`},
		{"Grep", `{"pattern":"secret","path":"../outside"}`},
	}
	for _, c := range cases {
		out, err := s.call(t, c.tool, c.input)
		if err == nil {
			t.Errorf("%s %s succeeded: %v", c.tool, c.input, out)
			continue
		}
		if !errors.Is(err, ErrOutside) {
			t.Errorf("%s %s: err = %v, want ErrOutside", c.tool, c.input, err)
		}
		if s, ok := out.(string); ok && strings.Contains(s, "top secret") {
			t.Errorf("%s leaked the secret", c.tool)
		}
	}
	got, err := os.ReadFile(secret)
	if err != nil || string(got) != "top secret\n" {
		t.Errorf("secret changed: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(s.outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a file was created outside the working directory")
	}
	// Walking tools do not follow symlinks out of the directory.
	for _, c := range []struct{ tool, input string }{
		{"Glob", `{"pattern":"**/*"}`},
		{"Grep", `{"pattern":"secret"}`},
	} {
		out, err := s.call(t, c.tool, c.input)
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if strings.Contains(out.(string), "secret.txt") || strings.Contains(out.(string), "top secret") {
			t.Errorf("%s followed a symlink out: %q", c.tool, out)
		}
	}
}

func TestAbsolutePathInsideIsAccepted(t *testing.T) {
	s := newSandbox(t)
	out, err := s.call(t, "Read", `{"file_path":"`+filepath.Join(s.dir, "notes.txt")+`","offset":2,"limit":1}`)
	if err != nil || out != "line two\n" {
		t.Fatalf("Read = %q, %v", out, err)
	}
}

func TestWriteEditRead(t *testing.T) {
	s := newSandbox(t)
	if _, err := s.call(t, "Write", `{"file_path":"docs/new/readme.md","content":"alpha beta alpha\n"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.call(t, "Edit", `{"file_path":"docs/new/readme.md","old_string":"alpha","new_string":"gamma"}`); err == nil ||
		!strings.Contains(err.Error(), "occurs 2 times") {
		t.Fatalf("ambiguous edit: %v", err)
	}
	if _, err := s.call(t, "Edit", `{"file_path":"docs/new/readme.md","old_string":"beta","new_string":"BETA"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.call(t, "Edit", `{"file_path":"docs/new/readme.md","old_string":"alpha","new_string":"A","replace_all":true}`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.call(t, "Edit", `{"file_path":"docs/new/readme.md","old_string":"zeta","new_string":"x"}`); err == nil {
		t.Fatal("edit of a missing string succeeded")
	}
	got, err := os.ReadFile(filepath.Join(s.dir, "docs/new/readme.md"))
	if err != nil || string(got) != "A BETA A\n" {
		t.Fatalf("file = %q, %v", got, err)
	}
	if _, err := s.call(t, "Write", `{"file_path":"x.txt"}`); err == nil {
		t.Error("Write without content succeeded")
	}
}

func TestReadRefusesBinaryAndDirectories(t *testing.T) {
	s := newSandbox(t)
	testfixtures.WriteFile(t, filepath.Join(s.dir, "bin.dat"), "ab\x00cd")
	if _, err := s.call(t, "Read", `{"file_path":"bin.dat"}`); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("binary: %v", err)
	}
	if _, err := s.call(t, "Read", `{"file_path":"pkg"}`); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
	testfixtures.WriteFile(t, filepath.Join(s.dir, "bad.txt"), "ok \xff\xfe end")
	out, err := s.call(t, "Read", `{"file_path":"bad.txt"}`)
	if err != nil || out != "ok \uFFFD end" {
		t.Errorf("invalid UTF-8 read = %q, %v", out, err)
	}
}

func TestReadTruncatesLargeFiles(t *testing.T) {
	dir := t.TempDir()
	testfixtures.WriteFile(t, filepath.Join(dir, "big.txt"), strings.Repeat("x", 5000))
	rec := &recorder{t: t}
	r, err := NewRouter(dir, rec.emit, Options{MaxOutput: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Call(context.Background(), "Read", "c", json.RawMessage(`{"file_path":"big.txt"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := out.(string); !strings.HasPrefix(s, strings.Repeat("x", 1000)+"\n[truncated: file is 5000 bytes") {
		t.Errorf("output = %.80q…", s)
	}
}

func TestGlob(t *testing.T) {
	s := newSandbox(t)
	testfixtures.WriteFile(t, filepath.Join(s.dir, ".git", "config"), "x")
	cases := map[string]string{
		`{"pattern":"**/*.go"}`:               "main.go\npkg/a/a.go",
		`{"pattern":"*.go"}`:                  "main.go",
		`{"pattern":"*.go","path":"pkg/a"}`:   "pkg/a/a.go",
		`{"pattern":"pkg/**"}`:                "pkg/a/a.go",
		`{"pattern":"*.rs"}`:                  "no files match *.rs",
		`{"pattern":"**/config"}`:             "no files match **/config",
		`{"pattern":"**/*.txt"}`:              "notes.txt",
		`{"pattern":"*.go","path":"pkg/../"}`: "main.go",
	}
	for in, want := range cases {
		out, err := s.call(t, "Glob", in)
		if err != nil {
			t.Errorf("Glob %s: %v", in, err)
			continue
		}
		if out != want {
			t.Errorf("Glob %s = %q, want %q", in, out, want)
		}
	}
	if _, err := s.call(t, "Glob", `{"pattern":"[a-"}`); err == nil {
		t.Error("bad pattern accepted")
	}
}

func TestGrep(t *testing.T) {
	s := newSandbox(t)
	testfixtures.WriteFile(t, filepath.Join(s.dir, "bin.dat"), "hello\x00world")
	out, err := s.call(t, "Grep", `{"pattern":"(?:H|h)ello"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "main.go:4:\tprintln(\"hello\")\npkg/a/a.go:3:// Hello says hello.\npkg/a/a.go:4:func Hello() {}\n"
	if out != want {
		t.Errorf("Grep = %q, want %q", out, want)
	}
	out, err = s.call(t, "Grep", `{"pattern":"HELLO","ignore_case":true,"glob":"a.go"}`)
	if err != nil || out != "pkg/a/a.go:3:// Hello says hello.\npkg/a/a.go:4:func Hello() {}\n" {
		t.Errorf("Grep ignore_case glob = %q, %v", out, err)
	}
	out, err = s.call(t, "Grep", `{"pattern":"two","path":"notes.txt"}`)
	if err != nil || out != "notes.txt:2:line two\n" {
		t.Errorf("Grep file = %q, %v", out, err)
	}
	if _, err := s.call(t, "Grep", `{"pattern":"("}`); err == nil {
		t.Error("bad regexp accepted")
	}
}

func TestBash(t *testing.T) {
	s := newSandbox(t)
	out, err := s.call(t, "Bash", `{"command":"pwd; echo err >&2; ls notes.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	res := out.(BashResult)
	real, _ := filepath.EvalSymlinks(s.dir)
	if res.ExitCode != 0 || !strings.Contains(res.Output, real) || !strings.Contains(res.Output, "err\n") || !strings.Contains(res.Output, "notes.txt") {
		t.Errorf("Bash = %+v", res)
	}
	out, err = s.call(t, "Bash", `{"command":"echo partial; exit 3"}`)
	if err == nil || out.(BashResult).ExitCode != 3 || out.(BashResult).Output != "partial\n" {
		t.Errorf("exit 3: %+v, %v", out, err)
	}
	ev := s.rec.events[len(s.rec.events)-1].Tool()
	if ev.Error != "Bash: exit status 3" {
		t.Errorf("recorded error = %q", ev.Error)
	}
}

// A command that outlives its timeout is killed with everything it started.
func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	s := newSandbox(t)
	pidFile := filepath.Join(s.dir, "child.pid")
	start := time.Now()
	out, err := s.call(t, "Bash", `{"command":"sleep 30 & echo $! > child.pid; wait","timeout":1}`)
	if err == nil || !strings.Contains(err.Error(), "timed out") || !out.(BashResult).TimedOut {
		t.Fatalf("timeout: %+v, %v", out, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	proctest.AssertDead(t, strings.TrimSpace(string(data)))
}

func TestBashOutputIsBounded(t *testing.T) {
	dir := t.TempDir()
	rec := &recorder{t: t}
	r, err := NewRouter(dir, rec.emit, Options{MaxOutput: 100})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Call(context.Background(), "Bash", "c", json.RawMessage(`{"command":"head -c 100000 /dev/zero | tr '\\0' y"}`))
	if err != nil {
		t.Fatal(err)
	}
	res := out.(BashResult)
	if !res.Truncated || !strings.HasPrefix(res.Output, strings.Repeat("y", 100)+"\n[output truncated: 99900 more bytes]") {
		t.Errorf("Bash = %+v", res)
	}
}

func TestDefinitionsAreValidSchemas(t *testing.T) {
	defs := Definitions()
	names := []string{}
	for _, d := range defs {
		names = append(names, d.Name)
		b, err := json.Marshal(d.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(b, &schema); err != nil || schema.Type != "object" {
			t.Fatalf("%s schema: %s %v", d.Name, b, err)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s requires undeclared %q", d.Name, r)
			}
		}
		if d.Description == "" {
			t.Errorf("%s has no description", d.Name)
		}
	}
	if got := strings.Join(names, ","); got != "Read,Write,Edit,Bash,Glob,Grep" {
		t.Errorf("tools = %s", got)
	}
}

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pat, name string
		want      bool
	}{
		{"**", "a/b/c", true},
		{"**/*.go", "x.go", true},
		{"**/*.go", "a/b/x.go", true},
		{"a/**/c", "a/c", true},
		{"a/**/c", "a/b/b/c", true},
		{"a/**/c", "a/b/d", false},
		{"*.go", "a/x.go", false},
		{"a/*/c", "a/b/c", true},
		{"**/**/x", "x", true},
	}
	for _, c := range cases {
		if got := matchGlob(c.pat, c.name); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v", c.pat, c.name, got)
		}
	}
	// Many ** segments against a deep path stay linear, not exponential.
	start := time.Now()
	deep := strings.TrimSuffix(strings.Repeat("a/", 300), "/")
	if matchGlob(strings.Repeat("**/a/", 40)+"b", deep) {
		t.Error("pathological pattern matched")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("pathological pattern took %s", d)
	}
}

func TestAllowListRefusesOtherTools(t *testing.T) {
	dir := t.TempDir()
	rec := &recorder{t: t}
	r, err := NewRouter(dir, rec.emit, Options{Allow: []string{"Read"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Call(context.Background(), "Write", "c1", json.RawMessage(`{"file_path":"x","content":"y"}`))
	if !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), "not enabled for this step (enabled: Read)") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Error("a tool outside the allow list ran")
	}
	if len(rec.events) != 2 || rec.events[1].Tool().Error == "" {
		t.Errorf("refusal not recorded: %+v", rec.events)
	}
}

// A tool other than the builtins runs through the router and is recorded
// as one router pair, its failure with it.
func TestRouterExtraTool(t *testing.T) {
	var events []transcript.ExchangeEvent
	emit := func(ev transcript.ExchangeEvent) error { events = append(events, ev); return nil }
	echo := Tool{Definition: Definition{Name: "echo_echo", Parameters: object(nil, map[string]any{})},
		Run: func(_ context.Context, in json.RawMessage) (any, error) {
			if strings.Contains(string(in), "fail") {
				return map[string]any{"output": "no"}, errors.New("echo: asked to fail")
			}
			return map[string]any{"output": string(in)}, nil
		}}
	r, err := NewRouter(t.TempDir(), emit, Options{Extra: []Tool{echo}, Allow: []string{"echo_echo", "Read"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Call(context.Background(), "echo_echo", "c1", json.RawMessage(`{"text":"hi"}`))
	if err != nil || Answer(out, err) != `{"output":"{\"text\":\"hi\"}"}` {
		t.Fatalf("echo: %v %v", out, err)
	}
	if _, err := r.Call(context.Background(), "echo_echo", "c2", json.RawMessage(`{"text":"fail"}`)); err == nil {
		t.Fatal("no failure")
	}
	if len(events) != 4 || events[3].Tool().Error != "echo: asked to fail" || events[2].Tool().Fidelity != transcript.FidelityRouter {
		t.Fatalf("events %+v", events)
	}
}
