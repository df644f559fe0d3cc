// Package fulldisk gives tests a real file system that runs out of space:
// a small tmpfs mounted for the test, on which writes fail with ENOSPC as
// they do on a full disk. Mounting needs root (or CAP_SYS_ADMIN); where it
// is not allowed, the test is skipped with the reason, and the writers'
// own tests cover the same paths with an injected failing writer.
package fulldisk

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size bytes (rounded up to pages by the kernel)
// on a new temporary directory and unmounts it when the test ends.
func Mount(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	opts := "size=" + itoa(size) + ",mode=0700"
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v): the injected-writer tests cover ENOSPC instead", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a file into dir until the file system is full.
func Fill(t testing.TB, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			break
		}
	}
	// Small writes may still fit in the last partial page.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			return
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
