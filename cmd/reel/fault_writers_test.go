package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/fulldisk"
	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/transcript"
)

// The writers added after issue 15 follow its rules. On a full disk the
// html replay, the exports, the run index and import fail with the reason
// and a non-zero status, and leave what was there before whole, with no
// temporary file beside it. A FIFO at an output name is replaced, never
// opened (which would block); one at the run index is refused.
func TestFaultNewWritersOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	wf := filepath.Join(dir, "ok.yaml")
	writeFile(t, wf, "name: ok\nstates:\n  initial: s\n  s: {type: step, command: 'echo hello', on_success: d}\n  d: {type: terminal}\n", 0o644)
	if res := runBounded(t, dir, time.Minute, "run", wf, "--storage", storage); res.code != 0 {
		t.Fatalf("run: %d\n%s", res.code, res.stderr)
	}
	session := filepath.Join(dir, "session.jsonl")
	writeFile(t, session, `{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s-1","type":"user","message":{"role":"user","content":"hello"},"uuid":"u1","timestamp":"2025-11-01T10:00:00.000Z"}
{"parentUuid":"u1","isSidechain":false,"sessionId":"s-1","type":"assistant","message":{"model":"claude-sonnet-4-5","id":"m1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":1,"output_tokens":1}},"uuid":"u2","timestamp":"2025-11-01T10:00:01.000Z"}
`, 0o644)
	if res := runBounded(t, dir, time.Minute, "import", session, "--storage", storage); res.code != 0 {
		t.Fatalf("import: %d\n%s", res.code, res.stderr)
	}
	id := latestRun(t, storage)

	full := fulldisk.Mount(t, 64<<10)
	html := filepath.Join(full, "run.html")
	ag := filepath.Join(full, "ag")
	fs := filepath.Join(full, "fs")
	fullStorage := filepath.Join(full, "st")
	for p, body := range map[string]string{html: "old html\n", filepath.Join(fs, "meta.json"): "old meta\n"} {
		writeFile(t, p, body, 0o600)
	}
	if err := os.MkdirAll(transcript.Dir(fullStorage), 0o700); err != nil {
		t.Fatal(err)
	}
	if res := runBounded(t, dir, time.Minute, "export", id, "--to", "agentlog", ag, "--storage", storage); res.code != 0 {
		t.Fatalf("export agentlog: %d\n%s", res.code, res.stderr)
	}
	before := snapshot(t, full)
	fulldisk.Fill(t, full)
	filler := filepath.Join(full, "filler")

	for _, c := range []struct {
		what string
		args []string
	}{
		{"replay --format html -o", []string{"replay", id, "--format", "html", "-o", html, "--storage", storage}},
		{"export --to agentlog --force", []string{"export", id, "--to", "agentlog", ag, "--force", "--storage", storage}},
		{"export --to flowstudio --force", []string{"export", id, "--to", "flowstudio", fs, "--force", "--storage", storage}},
		{"import", []string{"import", session, "--storage", fullStorage}},
		{"runs (building the index)", []string{"runs", "--storage", fullStorage}},
	} {
		res := runBounded(t, dir, time.Minute, c.args...)
		if res.code == 0 || !strings.Contains(res.stderr, "no space left on device") && !strings.Contains(res.stderr, "disk is full") {
			t.Errorf("%s on a full disk: exit %d\n%s", c.what, res.code, res.stderr)
		}
		after := snapshot(t, full)
		for p, b := range before {
			if after[p] != b {
				t.Errorf("%s: %s changed on a full disk", c.what, p)
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok && p != filler && !strings.HasPrefix(p, index.Path(fullStorage)) {
				t.Errorf("%s: left %s behind", c.what, p)
			}
		}
	}
	if entries, _ := os.ReadDir(transcript.Dir(fullStorage)); len(entries) != 0 {
		t.Errorf("import on a full disk left %d file(s) in transcripts/", len(entries))
	}

	// A FIFO where html is written: replaced, without blocking.
	fifo := filepath.Join(dir, "fifo.html")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if res := runBounded(t, dir, 30*time.Second, "replay", id, "--format", "html", "-o", fifo, "--storage", storage); res.code != 0 {
		t.Errorf("html over a FIFO: %d\n%s", res.code, res.stderr)
	}
	if st, err := os.Lstat(fifo); err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Errorf("html over a FIFO: %v %v", st.Mode(), err)
	}
	// A FIFO at the run index: refused, at once.
	for _, f := range index.Files(storage) {
		os.Remove(f)
	}
	if err := syscall.Mkfifo(index.Path(storage), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runBounded(t, dir, 30*time.Second, "runs", "--storage", storage); res.code == 0 || !strings.Contains(res.stderr, "a FIFO") {
		t.Errorf("runs with a FIFO index: %d\n%s", res.code, res.stderr)
	}
}

// snapshot maps every file under dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			m[p] = string(b)
		}
		return nil
	})
	return m
}
