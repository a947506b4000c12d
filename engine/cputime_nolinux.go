//go:build !linux

package engine

import "time"

// childCPU cannot be read here: a worker's limit goes by wall-clock time alone.
func childCPU(pid int) (time.Duration, bool) { return 0, false }
