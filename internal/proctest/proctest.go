// Package proctest checks, in tests, that processes started by the code
// under test have ended (it reads /proc, so it works on Linux only), and
// builds the commands that tests run as real processes.
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

// CPU is the CPU time (user and system) process pid has used so far, read
// from /proc/pid/stat; 0 when the process is gone. It counts in the
// kernel's clock ticks (USER_HZ, 100 a second on Linux).
func CPU(pid int) time.Duration {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the parenthesised command name: state is the
	// first, utime the 12th and stime the 13th.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * (time.Second / 100)
}
