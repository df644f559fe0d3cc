package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelhq/reel/internal/fulldisk"
	"github.com/reelhq/reel/transcript"
)

// The transcript size limit stops the run, not just the recording: the
// loop below would run for minutes; it must end at the limit with status
// failure, exit status 4 and the reason in the report, the transcript's
// run.completed, the audit trail and the display.
func TestTranscriptLimitStopsTheRun(t *testing.T) {
	h := newHarness(t)
	h.e.Limits = transcript.Limits{MaxFileSize: 64 << 10}
	start := time.Now()
	rep := h.run(context.Background(), `
name: big
states:
  initial: each
  each:
    type: while
    while: loop.Index < 2000
    max_iterations: 2000
    body: [say]
    on_success: done
  say:
    type: step
    command: 'echo a line of output that fills the transcript; sleep 0.01'
  done:
    type: terminal
`, nil)
	if time.Since(start) > 30*time.Second {
		t.Fatalf("the run went on for %s past the limit", time.Since(start))
	}
	if rep.Status != "failure" || rep.ExitCode != 4 || rep.RecordError == nil ||
		!strings.Contains(rep.Error, "recording failed") || !strings.Contains(rep.Error, "exceeds limit") {
		t.Fatalf("report: status %s, exit %d, error %q, record error %v", rep.Status, rep.ExitCode, rep.Error, rep.RecordError)
	}
	evs, err := transcript.ReadFile(rep.TranscriptPath)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Type != transcript.RunCompleted || !strings.Contains(last.Step().Error, "exceeds limit") {
		t.Fatalf("last event %s %+v, want run.completed naming the limit", last.Type, last.Step())
	}
	var rr transcript.RunResult
	if err := transcript.DecodeResult(last.Step().Result, &rr); err != nil || rr.Status != "failure" || rr.ExitCode != 4 {
		t.Fatalf("run result %+v, %v", rr, err)
	}
	if st, _ := os.Stat(rep.TranscriptPath); st.Size() > 64<<10 {
		t.Fatalf("transcript grew to %d bytes", st.Size())
	}
	if !strings.Contains(h.display.String(), "big failure") || !strings.Contains(h.display.String(), "recording failed") {
		t.Fatalf("display does not say so:\n%s", tail(h.display.String(), 600))
	}
	var end map[string]any
	for _, e := range auditEntries(t, h.storage) {
		if e["event"] == "workflow.completed" {
			end = e
		}
	}
	if end == nil || end["status"] != "failure" || end["exit_code"] != float64(4) || !strings.Contains(end["error"].(string), "exceeds limit") {
		t.Fatalf("audit end entry %v", end)
	}
}

// A disk that fills during the run stops it: the transcript keeps every
// complete line, and the audit trail's next entries start on a fresh line.
func TestFullDiskStopsTheRun(t *testing.T) {
	h := newHarness(t)
	h.storage = fulldisk.Mount(t, 64<<10)
	h.e.Storage = h.storage
	wf := h.load("wf.yaml", `
name: fill
states:
  initial: each
  each:
    type: while
    while: loop.Index < 5000
    max_iterations: 5000
    body: [say]
    on_success: done
  say:
    type: step
    command: 'echo a line of output that fills the disk'
  done:
    type: terminal
`)
	rep, err := h.e.Run(context.Background(), wf, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != "failure" || rep.ExitCode != 4 || !strings.Contains(rep.Error, "no space left on device") {
		t.Fatalf("report: %s %d %q", rep.Status, rep.ExitCode, rep.Error)
	}
	data, err := os.ReadFile(rep.TranscriptPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("transcript ends in a fragment: %q", data[max(0, len(data)-60):])
	}
	if _, err := transcript.ReadAll(bytes.NewReader(data)); err != nil {
		t.Fatalf("transcript does not read: %v", err)
	}
	// Room comes back; the next run's audit entries start on a fresh line
	// whatever the last run left.
	os.Remove(rep.TranscriptPath)
	h.display.Reset()
	h.run(context.Background(), "name: next\nstates:\n  initial: done\n  done:\n    type: terminal\n", nil)
	raw, _ := os.ReadFile(filepath.Join(h.storage, "audit.jsonl"))
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	good := 0
	for _, l := range lines {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) == nil {
			good++
			continue
		}
		if l != lines[len(lines)-1] && !strings.HasPrefix(l, "{") {
			t.Errorf("audit line %q is neither an entry nor a torn one", l)
		}
	}
	var next []string
	for _, l := range lines[len(lines)-4:] {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("entry of the next run torn: %q", l)
		}
		next = append(next, e["event"].(string))
	}
	if next[0] != "workflow.started" || next[3] != "workflow.completed" {
		t.Fatalf("next run's entries: %v", next)
	}
}

// A run started on a full disk fails at once with exit status 4 and leaves
// no empty transcript behind; without a transcript, the audit trail that
// cannot be written stops it the same way.
func TestRunOnFullDisk(t *testing.T) {
	for _, noTranscript := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-transcript=%v", noTranscript), func(t *testing.T) { runOnFullDisk(t, noTranscript) })
	}
}

func runOnFullDisk(t *testing.T, noTranscript bool) {
	h := newHarness(t)
	h.e.NoTranscript = noTranscript
	h.storage = fulldisk.Mount(t, 16<<10)
	h.e.Storage = h.storage
	os.MkdirAll(transcript.Dir(h.storage), 0o700)
	fulldisk.Fill(t, h.storage)
	wf := h.load("wf.yaml", "name: x\nstates:\n  initial: s\n  s:\n    type: step\n    command: 'touch ran'\n    dir: "+h.dir+"\n    on_success: done\n  done:\n    type: terminal\n")
	rep, err := h.e.Run(context.Background(), wf, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != "failure" || rep.ExitCode != 4 {
		t.Fatalf("report: %s %d %q", rep.Status, rep.ExitCode, rep.Error)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "ran")); err == nil {
		t.Fatal("a step ran although nothing could be recorded")
	}
	entries, _ := os.ReadDir(transcript.Dir(h.storage))
	for _, e := range entries {
		if info, _ := e.Info(); info.Size() == 0 {
			t.Fatalf("empty transcript left behind: %s", e.Name())
		}
	}
}

func auditEntries(t *testing.T, storage string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(storage, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
