//go:build unix

package index

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used so far, so a benchmark can
// say what a job costs apart from how busy the machine is.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
