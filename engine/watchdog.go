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
func (w *world) watch(budget time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	done := make(chan struct{})
	w.stopWatch = func() { close(done) }
	go func() {
		tick := time.NewTicker(max(budget/8, time.Millisecond))
		defer tick.Stop()
		start := time.Now()
		last, since := w.steps.Load(), start
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				if n := w.steps.Load(); n != last {
					last, since = n, now
				}
				switch {
				case now.Sub(since) >= budget:
					w.stuck = stuckSpin
				case now.Sub(start) >= runCapFactor*budget:
					w.stuck = stuckSlow
				default:
					continue
				}
				close(ch)
				return
			}
		}
	}()
	return ch
}
