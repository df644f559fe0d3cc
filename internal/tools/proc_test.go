package tools

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// assertDead waits briefly for pid to disappear (or become a zombie, which
// is dead but not yet reaped by its new parent).
func assertDead(t *testing.T, pid string) {
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
