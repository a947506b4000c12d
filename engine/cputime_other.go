//go:build !unix

package engine

import "time"

// processCPU cannot be read here: the watchdog goes by wall-clock time alone.
func processCPU() (time.Duration, bool) { return 0, false }
