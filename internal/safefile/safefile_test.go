package safefile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// within fails the test when fn has not returned after a few seconds: the
// defects these tests guard against are hangs.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

func TestOpenRefusesFIFOWithoutBlocking(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.jsonl")
	mkfifo(t, p)
	within(t, "Open on a FIFO", func() {
		_, err := Open(p)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("Open(fifo) = %v, want ErrNotRegular naming a FIFO", err)
		}
	})
	within(t, "ReadFile on a FIFO", func() {
		if _, err := ReadFile(p); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(fifo) = %v", err)
		}
	})
	within(t, "OpenAppender on a FIFO", func() {
		if _, err := OpenAppender(p); err == nil {
			t.Error("OpenAppender(fifo) succeeded")
		}
	})
	within(t, "FS.Open on a FIFO", func() {
		if _, err := fs.ReadFile(FS(filepath.Dir(p)), "x.jsonl"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("FS ReadFile(fifo) = %v", err)
		}
	})
}

func TestOpenRefusesDevicesAndDirectories(t *testing.T) {
	if _, err := Open("/dev/zero"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open(/dev/zero) = %v", err)
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open(dir) = %v", err)
	}
	// FS serves directories (ReadDir needs them) and regular files.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("x"), 0o600)
	if entries, err := fs.ReadDir(FS(dir), "."); err != nil || len(entries) != 1 {
		t.Errorf("FS ReadDir = %v, %v", entries, err)
	}
	if b, err := fs.ReadFile(FS(dir), "a"); err != nil || string(b) != "x" {
		t.Errorf("FS ReadFile = %q, %v", b, err)
	}
	if _, err := FS(dir).Open("../etc/passwd"); err == nil {
		t.Error("FS opened a path outside its directory")
	}
}

func TestWriteFileIsPrivateAtomicAndReplacesSymlinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o644)
	out := filepath.Join(dir, "export", "sub")
	target := filepath.Join(out, "meta.json")
	os.MkdirAll(out, 0o755)
	// A planted symlink at the target name and at the old fixed temporary
	// name: neither is followed.
	os.Symlink(victim, target)
	os.Symlink(victim, target+".tmp")
	if err := WriteFile(target, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("victim overwritten through a symlink: %q", b)
	}
	st, err := os.Lstat(target)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("target = %v, %v; want a regular 0600 file", st.Mode(), err)
	}
	// New directories are 0700.
	deep := filepath.Join(dir, "new", "deeper", "f")
	if err := WriteFile(deep, nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(dir, "new"), filepath.Join(dir, "new", "deeper")} {
		if st, _ := os.Stat(d); st.Mode().Perm() != 0o700 {
			t.Errorf("%s mode %v, want 0700", d, st.Mode().Perm())
		}
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") && e.Name() != "meta.json.tmp" {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

func TestCreateCloseWithoutCommitLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("old"), 0o600)
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half of the new"))
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("file = %q after an abandoned replacement", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("entries = %v, want only f", entries)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("Commit after Close succeeded")
	}
}

func TestAppenderRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	p := filepath.Join(dir, "audit.jsonl")
	os.Symlink(victim, p)
	if _, err := OpenAppender(p); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("OpenAppender(symlink) = %v, want a refusal naming the symlink", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim = %q", b)
	}
}

func TestAppenderStartsOnAFreshLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.jsonl")
	// An earlier process was cut short by a full disk mid-line.
	os.WriteFile(p, []byte(`{"a":1}`+"\n"+`{"torn":`), 0o600)
	a, err := OpenAppender(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AppendLine([]byte(`{"b":2}`)); err != nil {
		t.Fatal(err)
	}
	// A write that fails part way leaves a fragment; the next line must
	// not continue it.
	a.writes = func(b []byte) (int, error) {
		n, _ := a.f.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	if err := a.AppendLine([]byte(`{"c":3}`)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("AppendLine = %v, want ENOSPC", err)
	}
	a.writes = a.f.Write
	if err := a.AppendLine([]byte(`{"d":4}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendLine([]byte("two\nlines")); err == nil {
		t.Fatal("a line holding a newline was accepted")
	}
	a.Close()
	got, _ := os.ReadFile(p)
	want := `{"a":1}` + "\n" + `{"torn":` + "\n" + `{"b":2}` + "\n" + `{"c"` + "\n" + `{"d":4}` + "\n"
	if string(got) != want {
		t.Fatalf("file =\n%s\nwant\n%s", got, want)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	// Every complete line is intact: the fragments are lines of their own.
	lines := bytes.Split(bytes.TrimSuffix(got, []byte("\n")), []byte("\n"))
	if string(lines[2]) != `{"b":2}` || string(lines[4]) != `{"d":4}` {
		t.Fatalf("lines = %q", lines)
	}
}

func TestCheckTarget(t *testing.T) {
	dir := t.TempDir()
	if err := CheckTarget(filepath.Join(dir, "new"), false); err != nil {
		t.Errorf("missing dir: %v", err)
	}
	if err := CheckTarget(dir, false); err != nil {
		t.Errorf("empty dir: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o600)
	if err := CheckTarget(dir, false); !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("non-empty dir: %v", err)
	}
	if err := CheckTarget(dir, true); err != nil {
		t.Errorf("non-empty dir with force: %v", err)
	}
	if err := CheckTarget(filepath.Join(dir, "x"), true); err == nil {
		t.Error("a file as target was accepted")
	}
}

// CheckPlain accepts a missing name and a regular file, and refuses a
// symlink (even to a regular file), a FIFO and a directory without
// following or opening them.
func TestCheckPlain(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckPlain(reg, filepath.Join(dir, "missing")); err != nil {
		t.Fatalf("regular and missing: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(reg, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	for p, want := range map[string]string{link: "a symlink", fifo: "a FIFO", dir: "a directory"} {
		within(t, "CheckPlain", func() {
			if err := CheckPlain(reg, p); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), want) {
				t.Errorf("CheckPlain(%s) = %v, want ErrNotRegular naming %s", p, err, want)
			}
		})
	}
}

// Touch creates a private file, makes an existing one private through its
// own descriptor, and refuses a symlink without touching what it points to.
func TestTouch(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "db")
	if err := Touch(p); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(p); err != nil || st.Mode() != 0o600 {
		t.Fatalf("created: %v %v", st.Mode(), err)
	}
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte("kept"), 0o644)
	if err := Touch(p); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(p); st.Mode() != 0o600 {
		t.Errorf("existing 0644 file left %v", st.Mode())
	}
	if b, _ := os.ReadFile(p); string(b) != "kept" {
		t.Errorf("content changed to %q", b)
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, nil, 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(victim, link)
	if err := Touch(link); err == nil {
		t.Error("a symlink is accepted")
	}
	if st, _ := os.Stat(victim); st.Mode() != 0o644 {
		t.Errorf("the victim's mode changed to %v", st.Mode())
	}
	os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "dangling"))
	if err := Touch(filepath.Join(dir, "dangling")); err == nil {
		t.Error("a dangling symlink is accepted")
	}
	if _, err := os.Lstat(filepath.Join(dir, "missing")); err == nil {
		t.Error("a dangling symlink's target was created")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		if err := Touch(fifo); !errors.Is(err, ErrNotRegular) {
			t.Errorf("a FIFO: %v", err)
		}
	}
}
