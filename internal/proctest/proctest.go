// Package proctest checks, in tests, that processes started by the code
// under test have ended. It reads /proc, so it works on Linux only.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// AssertDead waits up to 5 s for the process pid to disappear, or to become
// a zombie (dead but not yet reaped by its new parent), and fails the test
// if it is still running then.
func AssertDead(t testing.TB, pid string) {
	t.Helper()
	if _, err := strconv.Atoi(pid); err != nil {
		t.Fatalf("bad pid %q", pid)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return
		}
		// The state follows the parenthesised command name.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %s still alive: %s", pid, stat)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
