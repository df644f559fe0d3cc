//go:build unix

package proctest

import (
	"syscall"
	"time"
)

// SelfCPU is the CPU time (user and system) the calling process has used
// so far, its goroutines' but not its children's, so a benchmark can say
// what a job costs apart from how busy a shared machine is.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
