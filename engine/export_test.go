package engine

import "time"

// SetCPUClock replaces the watchdog's CPU clock until the returned func is called.
func SetCPUClock(f func() (time.Duration, bool)) (restore func()) {
	old := cpuClock
	cpuClock = f
	return func() { cpuClock = old }
}

// SignatureKey is the text behind Signature, for tests' messages.
var SignatureKey = signatureKey

// SetProgressTick sets how often RunOptions.Progress is called until restore is called.
func SetProgressTick(d time.Duration) (restore func()) {
	old := progressTick
	progressTick = d
	return func() { progressTick = old }
}
