package engine

import (
	"time"
)

// What the watchdog's monitor found.
const (
	stuckSpin = "spin" // one switch ran longer than the budget
	stuckSlow = "slow" // the whole run ran longer than runCapFactor budgets
)

// runCapFactor bounds a run that keeps making progress: runCapFactor watchdog budgets
// of wall-clock time in all.
const runCapFactor = 10

// watch starts the watchdog's monitor and returns a channel it closes when the run is
// stuck: the world loop made no step (no event fired, no node gave the token back) for
// budget, which only a guest running without host calls does; or the whole run took
// runCapFactor budgets. A run on a slow machine that keeps making progress is never
// stopped before the latter, so host speed does not turn a long run into a "spin".
//
// Both limits count time twice, and both counts must run out: wall-clock time, and the
// CPU time the process used (where the OS tells it: cpuClock). A guest that spins burns
// CPU as fast as the machine gives it; a process that the machine starves (a loaded
// host, a stopped VM) burns none, and waiting for it is not a spin. The CPU count
// includes every thread of the process (the collector, other runs of an in-process
// sweep), so it can only run out sooner than the guest's own, never later.
func (w *world) watch(budget time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	done := make(chan struct{})
	w.stopWatch = func() { close(done) }
	cpu := func() time.Duration {
		if d, ok := cpuClock(); ok {
			return d
		}
		return -1 // unknown: wall-clock time alone decides
	}
	spent := func(from, to time.Duration, d time.Duration) bool { return from < 0 || to < 0 || to-from >= d }
	go func() {
		tick := time.NewTicker(max(budget/8, time.Millisecond))
		defer tick.Stop()
		start, cpuStart := time.Now(), cpu()
		last, since, cpuSince := w.steps.Load(), start, cpuStart
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				c := cpu()
				if n := w.steps.Load(); n != last {
					last, since, cpuSince = n, now, c
				}
				switch {
				case now.Sub(since) >= budget && spent(cpuSince, c, budget):
					w.stuck = stuckSpin
				case now.Sub(start) >= runCapFactor*budget && spent(cpuStart, c, runCapFactor*budget):
					w.stuck = stuckSlow
				default:
					continue
				}
				if w.opt.onWatchdog != nil {
					w.opt.onWatchdog()
				}
				close(ch)
				return
			}
		}
	}()
	return ch
}

// cpuClock is the CPU time the process has used, for the watchdog; a variable so that a
// test can starve a run.
var cpuClock = processCPU
