package transcript

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// notBlocking fails the test when fn has not returned after a few seconds.
func notBlocking(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

func TestFIFOIsRefusedWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	id := NewRunID()
	p := filepath.Join(dir, id+".jsonl")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	notBlocking(t, "Create on a FIFO", func() {
		if _, err := Create(dir, id, Options{}); !errors.Is(err, ErrNotRegular) && !errors.Is(err, syscall.ENXIO) {
			t.Errorf("Create = %v, want a refusal", err)
		}
	})
	notBlocking(t, "ReadFile on a FIFO", func() {
		if _, err := ReadFile(p); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile = %v, want ErrNotRegular", err)
		}
	})
	notBlocking(t, "Follow on a FIFO", func() {
		if _, err := Follow(context.Background(), p, 0, FollowOptions{}); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Follow = %v, want ErrNotRegular", err)
		}
	})
}

func TestRecorderRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	id := NewRunID()
	os.Symlink(victim, filepath.Join(dir, id+".jsonl"))
	if _, err := Create(dir, id, Options{}); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("Create through a symlink = %v, want a refusal naming it", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim = %q", b)
	}
}

func TestSecondRecorderIsRefused(t *testing.T) {
	dir := t.TempDir()
	id := NewRunID()
	r, err := Create(dir, id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Record(stepEvent(0))
	if _, err := Create(dir, id, Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Create = %v, want ErrLocked", err)
	}
	r.Close()
	r2, err := Create(dir, id, Options{})
	if err != nil {
		t.Fatalf("Create after Close: %v", err)
	}
	r2.Close()
}

func TestTornTailsAreNeverOverwritten(t *testing.T) {
	dir := t.TempDir()
	id := NewRunID()
	p := filepath.Join(dir, id+".jsonl")
	var saved []string
	for i, frag := range []string{`{"seq":2,"run_id":"first`, `{"seq":2,"second`, `{"third`} {
		r, err := Create(dir, id, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			r.Record(stepEvent(0))
		}
		r.Close()
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(frag)
		f.Close()
		r, err = Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tt, ok := r.TornTail()
		if !ok || tt.Size != len(frag) {
			t.Fatalf("recovery %d: TornTail = %+v, %v", i, tt, ok)
		}
		if b, _ := os.ReadFile(tt.Path); string(b) != frag {
			t.Fatalf("recovery %d: %s holds %q, want %q", i, tt.Path, b, frag)
		}
		saved = append(saved, tt.Path)
		r.Close()
	}
	want := []string{p + ".torn", p + ".torn.1", p + ".torn.2"}
	if strings.Join(saved, " ") != strings.Join(want, " ") {
		t.Fatalf("saved to %v, want %v", saved, want)
	}
	checkFile(t, p, 1)
	// A clean reopen reports nothing.
	r, _ := Open(p, Options{})
	if tt, ok := r.TornTail(); ok {
		t.Fatalf("clean reopen reported %+v", tt)
	}
	r.Close()
}

// A write cut short by a full disk or an I/O error leaves part of a line
// in the file; the recorder cuts it back so the transcript keeps every
// complete line.
func TestPartialWriteKeepsEveryCompleteLine(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) { partialWrite(t, errno) })
	}
}

func partialWrite(t *testing.T, errno syscall.Errno) {
	r, err := Create(t.TempDir(), NewRunID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := r.Record(stepEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	real := r.write
	r.write = func(b []byte) (int, error) {
		n, _ := real(b[:len(b)/2])
		return n, errno
	}
	if _, err := r.Record(stepEvent(3)); !errors.Is(err, errno) {
		t.Fatalf("Record = %v, want %v", err, errno)
	}
	// The error is sticky: nothing after it goes in, so no hole.
	r.write = real
	if _, err := r.Record(stepEvent(4)); !errors.Is(err, errno) {
		t.Fatalf("Record after the error = %v, want %v", err, errno)
	}
	r.Close()
	b, _ := os.ReadFile(r.Path())
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Fatalf("file ends in a fragment: %q", b[max(0, len(b)-40):])
	}
	checkFile(t, r.Path(), 3)
}

func TestRecorderThatWroteNothingLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	r, err := Create(dir, NewRunID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The disk is full from the start: run.started cannot go in.
	r.write = func([]byte) (int, error) { return 0, syscall.ENOSPC }
	if _, err := r.Record(ExchangeEvent{Type: RunStarted, Payload: &StepPayload{Name: "wf", Kind: KindWorkflow}}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Record = %v", err)
	}
	r.Close()
	if _, err := os.Stat(r.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an empty transcript was left behind: %v", err)
	}
	// A file the recorder did not create is never removed.
	id := NewRunID()
	p := filepath.Join(dir, id+".jsonl")
	os.WriteFile(p, nil, 0o600)
	r, _ = Open(p, Options{})
	r.Close()
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("an existing file was removed: %v", err)
	}
}

func TestFollowerReportsDeadWriter(t *testing.T) {
	r, err := Create(t.TempDir(), NewRunID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Record(ExchangeEvent{Type: RunStarted, Payload: &StepPayload{Name: "wf", Kind: KindWorkflow}})
	fl, err := Follow(context.Background(), r.Path(), 0, FollowOptions{Poll: 10 * time.Millisecond, Stale: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if ev, err := fl.Next(context.Background()); err != nil || ev.Type != RunStarted {
		t.Fatalf("first event %v, %v", ev.Type, err)
	}
	// While the writer lives, a quiet file is not a dead one.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = fl.Next(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next on a live, quiet transcript = %v, want to wait", err)
	}
	// The writer goes away without run.completed (for the lock, a closed
	// file and a dead process are the same: the kernel drops it).
	r.mu.Lock()
	r.f.Close()
	r.mu.Unlock()
	start := time.Now()
	_, err = fl.Next(context.Background())
	if !errors.Is(err, ErrWriterGone) || !strings.Contains(err.Error(), "no run.completed") {
		t.Fatalf("Next after the writer died = %v, want ErrWriterGone", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s to notice", d)
	}
	// A completed run ends with io.EOF as before.
	r2, _ := Create(t.TempDir(), NewRunID(), Options{})
	r2.Record(ExchangeEvent{Type: RunStarted, Payload: &StepPayload{Name: "wf", Kind: KindWorkflow}})
	r2.Record(ExchangeEvent{Type: RunCompleted, Payload: &StepPayload{Name: "wf", Kind: KindWorkflow}})
	r2.Close()
	fl2, _ := Follow(context.Background(), r2.Path(), 0, FollowOptions{Stale: time.Millisecond})
	defer fl2.Close()
	for {
		_, err := fl2.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("completed run: %v", err)
		}
	}
}
