//go:build !unix

package proctest

import "time"

// SelfCPU is not measured here: it returns 0, and metrics built on it
// read 0.
func SelfCPU() time.Duration { return 0 }
