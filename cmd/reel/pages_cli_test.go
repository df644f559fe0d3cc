package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/testfixtures"
)

// ownSession is our own Claude Code session log in the real shape (2.0.27):
// a /clear with its caveat and empty output, Markdown in the prompt, the
// thinking and the replies, a failed Bash call whose output (vitest's,
// coloured, with a title escape and a carriage return) is also its error,
// an Edit, a compaction summary and Codex-style environment context.
const ownSession = "testdata/pages/claude-session.jsonl"

// importRuns imports files into storage and returns their run ids.
func importRuns(t *testing.T, storage string, files ...string) []string {
	t.Helper()
	var ids []string
	for _, f := range files {
		out, errOut, err := runReel(t, context.Background(), "import", "--storage", storage, f)
		if err != nil {
			t.Fatalf("import %s: %v\n%s", f, err, errOut)
		}
		ids = append(ids, strings.Fields(out)[0])
	}
	return ids
}

// Issue 24, points 8, 9 and 12: replay on a terminal prints a real
// 38-minute session at once, writes no escape sequence the transcript
// holds, says a tool's error once and shows /clear as a command.
func TestReplayOnTerminalIsInstantAndClean(t *testing.T) {
	storage := t.TempDir()
	files := []string{ownSession}
	// claude-session-log/full-session-two.jsonl: a real Claude Code 2.0.26
	// session of 38 minutes with a /clear
	real := filepath.Join(testfixtures.Dir(t, "claude-session-log"), "full-session-two.jsonl")
	files = append(files, real)
	ids := importRuns(t, storage, files...)
	reelBinary(t) // built before the clock starts
	for i, id := range ids {
		start := time.Now()
		con := startConsole(t, t.TempDir(), []string{"REEL_STORAGE=" + storage, "NO_COLOR=1"}, "replay", id)
		code, out := con.wait()
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s: replay on a terminal took %s: paced without --pace", files[i], took)
		}
		if code != 0 {
			t.Fatalf("%s: exit %d:\n%s", files[i], code, out)
		}
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s: escapes reached the terminal:\n%q", files[i], out)
		}
		if !strings.Contains(out, "› /clear") || strings.Contains(out, "<command-name>") {
			t.Errorf("%s: /clear not shown as a command:\n%s", files[i], out)
		}
		if i == 0 {
			if n := strings.Count(out, "Exit code 1"); n != 1 {
				t.Errorf("the failed call's error shown %d times:\n%s", n, out)
			}
			for _, want := range []string{"⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯", "context compacted", "environment context … (3 lines folded)"} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in:\n%s", want, out)
				}
			}
		}
	}
	// --pace paces: the own session spans 2 minutes, gaps capped at 2s
	start := time.Now()
	con := startConsole(t, t.TempDir(), []string{"REEL_STORAGE=" + storage, "NO_COLOR=1"}, "replay", ids[0], "--pace", "--speed", "4")
	if code, out := con.wait(); code != 0 {
		t.Fatalf("--pace: exit %d\n%s", code, out)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("--pace took %s: not paced", took)
	}
}

// Issue 24, point 14: reel list in the checkout lists examples/.
func TestListInCheckoutFindsExamples(t *testing.T) {
	out, errOut, err := runReel(t, context.Background(), "list", "--quiet")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"demo", "summarize"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("reel list in the checkout: no %s in\n%s%s", want, out, errOut)
		}
	}
}

// Issue 24, point 14: export --to otlp with no collector fails in about a
// second and says what to do.
func TestExportOTLPWithoutCollectorFailsFast(t *testing.T) {
	storage := t.TempDir()
	ids := importRuns(t, storage, ownSession)
	// a port nothing listens on
	l := freePort(t)
	start := time.Now()
	_, errOut, err := runReel(t, context.Background(), "export", "--to", "otlp", "--otel-exporter", l, "--storage", storage, ids[0])
	took := time.Since(start)
	if err == nil {
		t.Fatal("export to no collector succeeded")
	}
	msg := err.Error() + errOut
	if took > 3*time.Second {
		t.Errorf("failed after %s", took)
	}
	for _, want := range []string{"no OTLP collector answers at", "--otel-exporter", "docs/opentelemetry.md"} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in %q", want, msg)
		}
	}
}

// Issue 24, point 14: serve --open opens the served address in the
// browser ($BROWSER here: a script that fetches what it is given).
func TestServeOpenOpensTheBrowser(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "st")
	importRuns(t, storage, ownSession)
	got := filepath.Join(dir, "opened")
	script := filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1\" > "+got+".tmp && mv "+got+".tmp "+got+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	con := startConsole(t, dir, []string{"BROWSER=" + script}, "serve", "--open", "--addr", "127.0.0.1:0", "--storage", storage)
	con.expect("reel serve: http://127.0.0.1:")
	waitForFile(t, got, "serve --open never opened the browser")
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	u := strings.TrimSpace(string(b))
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("the opened address %q: %v", u, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("opened %q: %s", u, resp.Status)
	}
	con.cmd.Process.Signal(os.Interrupt)
	con.wait()
}
