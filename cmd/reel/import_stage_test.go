package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelhq/reel/transcript"
)

// bigSession writes a Claude stream-json recording of n assistant
// messages: enough that an import spends a while writing its stage.
func bigSession(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, `{"type":"system","subtype":"init","session_id":"big","model":"claude-sonnet-4-5"}`)
	text := strings.Repeat("lorem ipsum dolor sit amet ", 20)
	for i := range n {
		line, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{
			"id": fmt.Sprintf("msg_%d", i), "role": "assistant", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("step %d: %s", i, text)}}}})
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// stagesIn lists the import staging directories in dir.
func stagesIn(t *testing.T, dir string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, ".import-*"))
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// startImport starts `reel import --mask-secrets` of src into storage.
func startImport(t *testing.T, storage, src string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(reelBinary(t), "import", "--mask-secrets", "--from", "claude-stream-json", "--storage", storage, src)
	cmd.Env = append(os.Environ(), "REEL_STORAGE=")
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &errb
}

// awaitStage returns once the import of the run runID into dir is
// writing its staging directory (a transcript has begun in it), with the
// stage.
func awaitStage(t *testing.T, dir, runID string) string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		for _, st := range stagesIn(t, dir) {
			if fi, err := os.Stat(filepath.Join(st, runID+".jsonl")); err == nil && fi.Size() > 0 {
				return st
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the import of run %s never showed its stage", runID)
	return ""
}

// killStaging SIGKILLs an import of src while it writes its stage, and
// returns the staging directory it left behind.
func killStaging(t *testing.T, storage, src string) string {
	t.Helper()
	cmd, _ := startImport(t, storage, src)
	st := awaitStage(t, transcript.Dir(storage), importRunID(t, src))
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(st); err != nil {
		t.Fatalf("the killed import's stage: %v", err)
	}
	return st
}

// importRunID is the run id an import of path gets: derived from its
// path, as reel import --json says.
func importRunID(t *testing.T, path string) string {
	t.Helper()
	sum := sha256.Sum256([]byte("reel-import\x00" + path))
	return transcript.FormatRunID([16]byte(sum[:16]))
}

// TestImportKilledLeavesNoStage (issue 26 item 7): an import SIGKILLed
// while it writes leaves its staging directory; the next import and
// reel index remove it, and neither touches the stage of an import that
// is still running.
func TestImportKilledLeavesNoStage(t *testing.T) {
	if testing.Short() {
		t.Skip("imports a large recording three times")
	}
	src, storage := t.TempDir(), t.TempDir()
	dir := transcript.Dir(storage)
	var big []string
	for i := range 3 {
		p := filepath.Join(src, fmt.Sprintf("big%d.jsonl", i))
		bigSession(t, p, 20000)
		big = append(big, p)
	}
	small, _ := filepath.Abs("testdata/import/stream.jsonl")

	left := killStaging(t, storage, big[0])
	r := runBinary(t, src, "import", "--from", "claude-stream-json", "--storage", storage, small)
	if r.code != 0 {
		t.Fatalf("import after the kill: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the next import left the killed one's stage %s: %v", left, err)
	}

	// A live import, stopped (SIGSTOP, as Ctrl-Z does) while it writes
	// its stage so that the others run while it holds it: the killed
	// import's own sweep and reel index leave it alone.
	live, liveErr := startImport(t, storage, big[2])
	liveStage := awaitStage(t, dir, importRunID(t, big[2]))
	live.Process.Signal(syscall.SIGSTOP)
	left = killStaging(t, storage, big[1])
	r = runBinary(t, src, "index", "--storage", storage)
	if r.code != 0 || !strings.Contains(r.stdout, "removed 1 staging directory left by killed imports") {
		t.Fatalf("reel index: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("reel index left the killed import's stage %s: %v", left, err)
	}
	if _, err := os.Stat(liveStage); err != nil {
		t.Fatalf("the live import's stage after reel index: %v", err)
	}
	live.Process.Signal(syscall.SIGCONT)
	if err := live.Wait(); err != nil {
		t.Fatalf("the live import: %v\n%s", err, liveErr)
	}
	if st := stagesIn(t, dir); len(st) != 0 {
		t.Errorf("stages left: %v", st)
	}
	// Both finished imports are whole: the small one and the live one.
	verifyStorage(t, dir)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d entries in %s, want the 2 imported transcripts", len(entries), dir)
	}
	events, err := transcript.ReadFile(filepath.Join(dir, importRunID(t, big[2])+".jsonl"))
	if err != nil || len(events) != 20004 {
		t.Errorf("the live import's transcript: %d events, %v; want 20004", len(events), err)
	}
}
