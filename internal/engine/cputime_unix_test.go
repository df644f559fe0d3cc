//go:build unix

package engine

import (
	"syscall"
	"time"
)

// selfCPU is the CPU time (user and system) the test process has used,
// its goroutines' and the in-process receiver's, not its children's.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
