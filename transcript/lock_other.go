//go:build !unix

package transcript

import "os"

// Without flock(2), recorders do not lock their files and Writing cannot
// tell a live run from an interrupted one.

func lockFile(*os.File) error { return nil }

// Writing reports whether a Recorder holds the transcript at path open; on
// this platform it cannot tell and reports false.
func Writing(path string) (bool, error) {
	_, err := os.Stat(path)
	return false, err
}

// WritingFile is Writing for a transcript the caller already has open; on
// this platform it cannot tell and reports false.
func WritingFile(*os.File) (bool, error) { return false, nil }

func writerAlive(*os.File) (alive, ok bool) { return false, false }
