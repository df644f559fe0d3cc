//go:build !unix

package importer

import (
	"os"
	"time"
)

// lockStage opens the staging directory path. Without flock(2) it takes
// no lock: tryLockStage goes by age instead.
func lockStage(path string) (*os.File, error) { return os.Open(path) }

// abandonedAfter is how old a staging directory must be for a sweep to
// take it for abandoned where no lock tells a live import's apart: an
// import stages for seconds.
const abandonedAfter = 24 * time.Hour

// tryLockStage reports whether the staging directory path is old enough to
// have been abandoned.
func tryLockStage(path string) (*os.File, bool) {
	st, err := os.Lstat(path)
	if err != nil || !st.IsDir() || time.Since(st.ModTime()) < abandonedAfter {
		return nil, false
	}
	f, err := os.Open(path)
	return f, err == nil
}
