//go:build unix

package transcript

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// A Recorder holds an exclusive flock(2) on its file while it is open, so
// that two recorders never append to one transcript and a reader can tell a
// run that is still being written from one whose writer died (the kernel
// drops the lock with the process).

// lockWait is how long a recorder retries a lock held by someone else: a
// reader probing with Writing holds a shared lock for microseconds.
const lockWait = 250 * time.Millisecond

func lockFile(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock transcript %s: %w", f.Name(), err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("open transcript %s: %w", f.Name(), ErrLocked)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// Writing reports whether a Recorder, in this process or another, holds the
// transcript at path open: the run is live. A transcript without
// run.completed that nobody writes was interrupted.
func Writing(path string) (bool, error) {
	f, err := openRead(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return writing(f)
}

// WritingFile is Writing for a transcript the caller already has open, so
// that a reader that has just read a file to its end can tell whether its
// run is live without opening it again.
func WritingFile(f *os.File) (bool, error) { return writing(f) }

// writing probes the writer's lock on the file f is open on.
func writing(f *os.File) (bool, error) {
	// A writer killed while it was starting a step leaves its lock, for
	// the moment until exec, to the child it forked: a lock that goes
	// within a few milliseconds was not a live writer's.
	for try := 0; ; try++ {
		err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return false, flock(f, syscall.LOCK_UN)
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return false, fmt.Errorf("probe transcript %s: %w", f.Name(), err)
		}
		if try == 4 {
			return true, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writerAlive reports whether a recorder holds the file f is open on; ok
// is false where that cannot be known.
func writerAlive(f *os.File) (alive, ok bool) {
	alive, err := writing(f)
	return alive, err == nil
}
