//go:build !unix

package engine

import "time"

// selfCPU is not measured here: the CPU metrics read 0.
func selfCPU() time.Duration { return 0 }
