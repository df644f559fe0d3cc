package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
)

// call runs a tool and fails the test if it has not returned after a few
// seconds: the defects these tests guard against are hangs.
func (s *sandbox) callWithin(t *testing.T, ctx context.Context, name, input string) (any, error) {
	t.Helper()
	type res struct {
		out any
		err error
	}
	done := make(chan res, 1)
	go func() {
		out, err := s.router.Call(ctx, name, "c1", json.RawMessage(input))
		done <- res{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s %s blocked", name, input)
		return nil, nil
	}
}

func TestFileToolsRefuseFIFOs(t *testing.T) {
	s := newSandbox(t)
	if err := syscall.Mkfifo(filepath.Join(s.dir, "pipe"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct{ tool, input string }{
		{"Read", `{"file_path":"pipe"}`},
		{"Edit", `{"file_path":"pipe","old_string":"a","new_string":"b"}`},
		{"Write", `{"file_path":"pipe","content":"x"}`},
		{"Grep", `{"pattern":"x","path":"pipe"}`},
	} {
		_, err := s.callWithin(t, context.Background(), c.tool, c.input)
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s on a FIFO: %v, want ErrNotRegular", c.tool, err)
		}
	}
	// A directory search passes over the FIFO.
	out, err := s.callWithin(t, context.Background(), "Grep", `{"pattern":"hello"}`)
	if err != nil || !strings.Contains(out.(string), "main.go") {
		t.Errorf("Grep over the directory: %v, %v", out, err)
	}
	if st, err := os.Lstat(filepath.Join(s.dir, "pipe")); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st, err)
	}
}

func TestFileToolsRefuseHardLinks(t *testing.T) {
	s := newSandbox(t)
	secret := filepath.Join(s.outside, "secret.txt")
	link := filepath.Join(s.dir, "innocent.txt")
	if err := os.Link(secret, link); err != nil {
		t.Skipf("link: %v", err)
	}
	for _, c := range []struct{ tool, input string }{
		{"Read", `{"file_path":"innocent.txt"}`},
		{"Edit", `{"file_path":"innocent.txt","old_string":"top","new_string":"no"}`},
		{"Write", `{"file_path":"innocent.txt","content":"overwritten"}`},
		{"Grep", `{"pattern":"secret","path":"innocent.txt"}`},
	} {
		out, err := s.callWithin(t, context.Background(), c.tool, c.input)
		if !errors.Is(err, ErrHardLinked) {
			t.Errorf("%s on a hard link: %v, %v; want ErrHardLinked", c.tool, out, err)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "top secret\n" {
		t.Fatalf("the file outside changed: %q", b)
	}
	out, err := s.callWithin(t, context.Background(), "Grep", `{"pattern":"top secret"}`)
	if err != nil || !strings.HasPrefix(out.(string), "no matches") || !strings.Contains(out.(string), "1 file(s) not searched") {
		t.Fatalf("Grep over the directory: %q, %v", out, err)
	}
}

func TestWriteAndEditAreAtomicAndKeepTheMode(t *testing.T) {
	s := newSandbox(t)
	p := filepath.Join(s.dir, "run.sh")
	testfixtures.WriteFile(t, p, "echo old\n")
	os.Chmod(p, 0o750)
	if _, err := s.callWithin(t, context.Background(), "Edit", `{"file_path":"run.sh","old_string":"old","new_string":"new"}`); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "echo new\n" || st.Mode().Perm() != 0o750 {
		t.Fatalf("after Edit: %q mode %v", b, st.Mode().Perm())
	}
	if _, err := s.callWithin(t, context.Background(), "Write", `{"file_path":"run.sh","content":"echo newer\n"}`); err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "echo newer\n" || st.Mode().Perm() != 0o750 {
		t.Fatalf("after Write: %q mode %v", b, st.Mode().Perm())
	}
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

// A tool stuck in a system call must not outlive its step: the call
// returns when the step's context ends.
func TestBoundedReturnsWhenTheStepEnds(t *testing.T) {
	ctx, cancel := context.WithTimeoutCause(context.Background(), 100*time.Millisecond, errors.New("step timed out"))
	defer cancel()
	stuck := make(chan struct{})
	defer close(stuck)
	start := time.Now()
	_, err := bounded(ctx, "Read", func() (any, error) { <-stuck; return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "step timed out") || time.Since(start) > 2*time.Second {
		t.Fatalf("bounded = %v after %s", err, time.Since(start))
	}
}

func TestBashGetsAnAllowListedEnvironment(t *testing.T) {
	dir := t.TempDir()
	rec := &recorder{t: t}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm",
		"OPENAI_API_KEY=sk-should-not-leak", "GITHUB_TOKEN=ghp_no", "AWS_SECRET_ACCESS_KEY=no", "HTTPS_PROXY=http://u:p@proxy", "GOFLAGS=-mod=mod"}
	r, err := NewRouter(dir, rec.emit, Options{Env: env, PassEnv: []string{"GOFLAGS"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Call(context.Background(), "Bash", "c1", json.RawMessage(`{"command":"env | sort"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := out.(BashResult).Output
	for _, want := range []string{"HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "GOFLAGS=-mod=mod", "PATH="} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	for _, leak := range []string{"OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "HTTPS_PROXY"} {
		if strings.Contains(got, leak) {
			t.Errorf("%s reached the command:\n%s", leak, got)
		}
	}
}
