package main

import (
	"os"
	"testing"

	"github.com/reelhq/reel/internal/proctest"
)

// TestMain gives the tests, and every reel process they start, a per-user
// data directory of their own: a run outside any project goes to
// $XDG_DATA_HOME/reel/storage, which must never be the developer's.
func TestMain(m *testing.M) {
	// AWF's plugins come from the tests' own directories only
	os.Unsetenv("AWF_PLUGINS_PATH")
	proctest.Main(m)
}
