//go:build unix

package transcript

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// One recorder per transcript: a second, in this process or another, is
// refused while the first is open, and Writing tells the two states apart.
func TestRecorderLocksItsFile(t *testing.T) {
	dir := t.TempDir()
	id := NewRunID()
	r, err := Create(dir, id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := r.Path()
	if _, err := r.Record(ExchangeEvent{Type: RunStarted, Payload: &StepPayload{Name: "w", Kind: KindWorkflow}}); err != nil {
		t.Fatal(err)
	}
	if live, err := Writing(path); err != nil || !live {
		t.Fatalf("Writing while open: %v %v", live, err)
	}
	if _, err := Open(path, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second recorder: %v, want ErrLocked", err)
	}
	// another process sees the lock too
	if os.Getenv("REEL_LOCK_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestLockFromAnotherProcess$")
		cmd.Env = append(os.Environ(), "REEL_LOCK_CHILD="+path)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("child process: %v\n%s", err, out)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if live, err := Writing(path); err != nil || live {
		t.Fatalf("Writing after Close: %v %v", live, err)
	}
	r2, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen after Close: %v", err)
	}
	if r2.LastSeq() != 1 {
		t.Fatalf("reopened at seq %d", r2.LastSeq())
	}
	r2.Close()
	if _, err := Writing(filepath.Join(dir, "nope.jsonl")); err == nil {
		t.Fatal("Writing of a missing file")
	}
}

func TestLockFromAnotherProcess(t *testing.T) {
	path := os.Getenv("REEL_LOCK_CHILD")
	if path == "" {
		t.Skip("run by TestRecorderLocksItsFile")
	}
	if live, err := Writing(path); err != nil || !live {
		t.Fatalf("Writing from another process: %v %v", live, err)
	}
	if _, err := Open(path, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open from another process: %v", err)
	}
}
