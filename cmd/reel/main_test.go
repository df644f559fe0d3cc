package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the tests, and every reel process they start, a per-user
// data directory of their own: a run outside any project goes to
// $XDG_DATA_HOME/reel/storage, which must never be the developer's.
func TestMain(m *testing.M) {
	data, err := os.MkdirTemp("", "reel-test-data-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_DATA_HOME", data)
	code := m.Run()
	os.RemoveAll(data)
	os.Exit(code)
}
