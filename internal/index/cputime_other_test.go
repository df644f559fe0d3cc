//go:build !unix

package index

import "time"

// cpuTime is unknown here; benchmarks leave out their CPU figures.
func cpuTime() time.Duration { return 0 }
