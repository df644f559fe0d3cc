//go:build unix

package importer

import (
	"errors"
	"os"
	"syscall"
)

// lockStage opens the staging directory path and takes an exclusive
// flock(2) on it, waiting for a sweep that holds it. The kernel lets go
// of the lock when the process dies, which is how a sweep tells a killed
// import's stage from a live one's.
func lockStage(path string) (*os.File, error) {
	f, err := openDir(path)
	if err != nil {
		return nil, err
	}
	if err := flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// tryLockStage locks the staging directory path unless another process
// holds it (a live import) or it is gone.
func tryLockStage(path string) (*os.File, bool) {
	f, err := openDir(path)
	if err != nil {
		return nil, false
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

// openDir opens the directory path itself, not a symbolic link's target.
func openDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
