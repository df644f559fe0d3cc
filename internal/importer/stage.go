// Staging: an import's runs are written beside the transcripts and moved
// into place together.

package importer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reelhq/reel/transcript"
)

// stagePrefix starts the name of every staging directory; the run readers
// pass over hidden directories.
const stagePrefix = ".import-"

// stage is a directory beside the transcripts where an import writes its
// runs, so that they replace an earlier import's all at once or not at
// all. The import holds a lock on it until it is gone, so that a sweep
// tells it from one a killed import left behind.
type stage struct {
	dir, tmp string
	lock     *os.File
}

// newStage makes a staging directory in dir (the transcripts directory,
// created if needed) and locks it.
func newStage(dir string) (*stage, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	for {
		tmp, err := os.MkdirTemp(dir, stagePrefix)
		if err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
		lock, err := lockStage(tmp)
		if errors.Is(err, fs.ErrNotExist) {
			continue // swept between its making and its locking
		}
		if err != nil {
			os.Remove(tmp)
			return nil, fmt.Errorf("import: lock %s: %w", tmp, err)
		}
		// A sweep that locked the directory first removed it before
		// letting go: the lock is then on a directory no longer there.
		if held, err := os.Stat(tmp); err == nil && sameFile(lock, held) {
			return &stage{dir: dir, tmp: tmp, lock: lock}, nil
		}
		lock.Close()
	}
}

// Dir is where the import records its transcripts.
func (st *stage) Dir() string { return st.tmp }

// Final is where a transcript written into the stage ends up.
func (st *stage) Final(path string) string { return filepath.Join(st.dir, filepath.Base(path)) }

// Commit moves every transcript of the stage into place, replacing the
// earlier import's, and removes the earlier import's child transcripts
// the new one no longer has (prior.ChildRunIDs not in keep).
func (st *stage) Commit(prior *Source, keep []string) error {
	defer st.Abort()
	entries, err := os.ReadDir(st.tmp)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(st.tmp, e.Name()), filepath.Join(st.dir, e.Name())); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	if prior != nil {
		kept := map[string]bool{}
		for _, id := range keep {
			kept[id] = true
		}
		for _, id := range prior.ChildRunIDs {
			if !kept[id] && transcript.ValidRunID(id) == nil {
				os.Remove(filepath.Join(st.dir, id+".jsonl"))
			}
		}
	}
	return nil
}

// Abort removes the stage and what was written into it, then lets go of
// its lock.
func (st *stage) Abort() {
	os.RemoveAll(st.tmp)
	st.lock.Close()
}

// sweep removes the staging directories in dir that no live import holds.
func sweep(dir string) (removed int, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sweep import stages: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagePrefix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		lock, ok := tryLockStage(path)
		if !ok {
			continue // a live import's, or gone already
		}
		// Removed while locked: an import that locks it after us finds it
		// gone and makes another.
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, fmt.Errorf("sweep import stage: %w", err))
		} else {
			removed++
		}
		lock.Close()
	}
	return removed, errors.Join(errs...)
}

// sameFile reports whether the open file f is the file st describes.
func sameFile(f *os.File, st fs.FileInfo) bool {
	fst, err := f.Stat()
	return err == nil && os.SameFile(fst, st)
}
