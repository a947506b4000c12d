package engine

import (
	"container/heap"
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/tetratelabs/wazero/sys"
)

// tick is how much virtual time passes on every clock read, yield and host I/O call, so
// that guests that spin on the clock make progress.
const tick = int64(time.Microsecond)

// event is one entry of the world's queue, ordered by (at, seq).
type event struct {
	at  int64
	seq uint64
	fn  func()
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }

func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

func (q *eventQueue) Push(x any) { *q = append(*q, x.(*event)) }

func (q *eventQueue) Pop() any { o := *q; e := o[len(o)-1]; *q = o[:len(o)-1]; return e }

func (q eventQueue) peekAt() (int64, bool) {
	if len(q) == 0 {
		return 0, false
	}
	return q[0].at, true
}

func (w *world) schedule(at int64, fn func()) {
	if at < w.now {
		at = w.now
	}
	w.seq++
	heap.Push(&w.events, &event{at: at, seq: w.seq, fn: fn})
}

// run executes the world until the workload exits, a check fails, or the horizon.
func (w *world) run(ctx context.Context) *Result {
	w.wallStart = time.Now()
	if c, ok := cpuClock(); ok {
		w.cpuStart = c
	}
	horizon := int64(w.cfg.Horizon)
	w.installPlan()
	w.scheduleQuiet()
	for _, n := range w.nodes {
		w.start(n)
	}
	var wallDeadline <-chan struct{}
	if w.opt.wallBudget > 0 {
		wallDeadline = w.watch(w.opt.wallBudget)
		defer w.stopWatch()
	}
	if w.opt.progress != nil {
		defer w.reportProgress()()
	}
	for !w.done {
		w.steps.Add(1)
		w.nowSeen.Store(w.now)
		if ctx.Err() != nil {
			w.verdict = VerdictError
			w.failure = &Failure{Kind: KindCanceled, Reason: "run canceled: " + ctx.Err().Error(), AtNS: w.now}
			break
		}
		if w.opt.reseedAt > 0 && !w.reseeded && w.now >= w.opt.reseedAt {
			w.reseed()
		}
		// Fire every event that is due.
		if at, ok := w.events.peekAt(); ok && at <= w.now {
			e := heap.Pop(&w.events).(*event)
			e.fn()
			continue
		}
		// A guest that never blocks (it polls the clock, or yields in a loop) keeps
		// something runnable forever: the horizon must end the run all the same.
		if w.now > horizon {
			w.reachHorizon("horizon reached")
			break
		}
		if inc := w.pickRunnable(); inc != nil {
			if !w.switchTo(inc, wallDeadline) {
				w.verdict = VerdictWatchdog
				reason := fmt.Sprintf("%s ran for more than the watchdog budget %s (wall-clock and CPU time) without yielding (a loop without host calls?)", inc.label, w.opt.wallBudget)
				if w.stuck == stuckSlow {
					reason = fmt.Sprintf("the run took more than %s of wall-clock time (%d× the watchdog) while still making progress: the machine is slow or the horizon long (raise \"watchdog\")", runCapFactor*w.opt.wallBudget, runCapFactor)
				}
				w.failure = &Failure{Kind: KindWatchdog, Node: inc.label, Reason: reason, AtNS: w.now}
				w.watchdogHit = true
				// The spinning guest's goroutine never reaches a safe point again, so the
				// next garbage collection would wait for it forever and hang this process
				// before it can report. The process is spent (a worker exits after this
				// result): collect no more.
				debug.SetGCPercent(-1)
				break
			}
			continue
		}
		at, ok := w.events.peekAt()
		if !ok || at > horizon {
			w.now = max(w.now, horizon)
			if !ok {
				w.reachHorizon("nothing left to run and no timer pending: horizon")
			} else {
				w.reachHorizon("horizon reached")
			}
			break
		}
		w.now = at
	}
	if !w.watchdogHit {
		w.shutdown()
	}
	return w.result()
}

// progressTick is how often Progress is called (a variable for tests).
var progressTick = time.Second

// reportProgress calls the run's Progress about once a second from its own goroutine
// until the returned function is called. It reads the loop's atomics only.
func (w *world) reportProgress() (stop func()) {
	done := make(chan struct{})
	start := time.Now()
	go func() {
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				w.opt.progress(RunProgress{Elapsed: now.Sub(start), VirtualNS: w.nowSeen.Load(), Steps: w.steps.Load()})
			}
		}
	}()
	return func() { close(done) }
}

// reachHorizon ends the run at the horizon: fail-stop nodes and liveness decide whether
// reaching it is a failure.
func (w *world) reachHorizon(why string) {
	w.verdict = VerdictHorizon
	w.tracef("world", "%s", why)
	w.failStopAtHorizon()
	w.livenessAtHorizon()
}

// pickRunnable draws the next node to run from the runnable set (skipping paused ones).
func (w *world) pickRunnable() *incarnation {
	if len(w.runnable) == 0 {
		return nil
	}
	var cands []int
	for i, inc := range w.runnable {
		if inc.node.pausedTo <= w.now {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	i := cands[0]
	if len(cands) > 1 {
		i = cands[w.rngSched.IntN(len(cands))]
	}
	inc := w.runnable[i]
	w.runnable = append(w.runnable[:i], w.runnable[i+1:]...)
	return inc
}

// switchTo hands the token to inc and waits until it gives it back. It returns false if
// the wall-clock budget ran out first.
func (w *world) switchTo(inc *incarnation, wallDeadline <-chan struct{}) bool {
	w.stats.Switches++
	inc.state = incRunning
	w.running = inc
	inc.resume <- struct{}{}
	select {
	case <-w.yield:
	case <-wallDeadline:
		return false
	}
	w.running = nil
	if inc.state == incDone {
		w.afterExit(inc)
	}
	return true
}

func (w *world) makeRunnable(inc *incarnation) {
	if inc.state == incBlocked || inc.state == incNew {
		inc.state = incRunnable
		inc.wakeGen++
		w.runnable = append(w.runnable, inc)
	}
}

// wake makes a blocked incarnation runnable (a socket it may wait on changed).
func (w *world) wake(inc *incarnation) {
	if inc != nil && inc.state == incBlocked {
		w.makeRunnable(inc)
	}
}

// park gives the token back to the scheduler and waits to be resumed. A host function
// calls it with inc.state already set (runnable or blocked).
func (inc *incarnation) park() {
	prof := inc.w.opt.prof
	if prof != nil {
		prof.park(inc)
	}
	inc.w.yield <- struct{}{}
	<-inc.resume
	if prof != nil {
		prof.resume(inc)
	}
	if inc.killed {
		panic(sys.NewExitError(exitCrashed))
	}
}

// yieldNow is a voluntary scheduling point: the incarnation stays runnable.
func (inc *incarnation) yieldNow() {
	w := inc.w
	inc.state = incRunnable
	w.runnable = append(w.runnable, inc)
	inc.park()
}

// advance moves the virtual clock on by d for the running incarnation and yields if an
// event became due, so that faults and deliveries happen on time.
func (inc *incarnation) advance(d int64) {
	w := inc.w
	w.now += d
	if at, ok := w.events.peekAt(); ok && at <= w.now {
		inc.yieldNow()
	} else if w.now > int64(w.cfg.Horizon) || w.reseedDue() {
		inc.yieldNow()
	}
}

// reseedDue reports whether cause's moment has come and the future is not yet
// re-randomized: the running node must give the scheduler a chance to do it now, not at
// the end of its slice.
func (w *world) reseedDue() bool {
	return w.opt.reseedAt > 0 && !w.reseeded && w.now >= w.opt.reseedAt
}

func (w *world) reseed() {
	w.reseeded = true
	fs := w.opt.futureSeed
	w.rngSched = streamRand(fs, "sched")
	w.rngNet = streamRand(fs, "net")
	w.rngDisk = streamRand(fs, "disk")
	w.reseedInterleave(fs)
	w.tracef("world", "future re-randomized (seed %d)", fs)
	// A given plan rules only the replayed past: from here on every random fault is drawn
	// from the config's rates, the per-fsync EIO draws included (they honour only a run
	// without a plan).
	w.opt.plan = nil
	// Drop the faults planned after this moment and draw new ones.
	var keep []Fault
	for _, f := range w.planned {
		if f.AtNS <= w.now {
			keep = append(keep, f)
		}
	}
	w.faultGen++ // cancels the fault events already queued after this moment
	// Faults armed on future disk ops are part of the future too, unless they were
	// already decided (armed) before this moment.
	for _, n := range w.nodes {
		var keep []Fault
		for _, f := range n.armed {
			// Compare with the moment, not w.now: the scheduler may regain control a few
			// microseconds past it, and a fault armed in between belongs to the future.
			if f.Directed || (f.ArmedNS > 0 && f.ArmedNS <= w.opt.reseedAt) {
				keep = append(keep, f)
			}
		}
		n.armed = keep
		if inc := n.inc; inc != nil {
			inc.crashAt, inc.eioAt, inc.devAt = 0, nil, nil
			armPinned(inc, keep)
		}
	}
	var fresh []Fault
	if !w.awaitsSetup() || w.setupDone {
		fresh = generatePlan(w.cfg, fs, w.now, w.nodes).Faults
	} // else the setup signal, in this future, draws them (sdk_lifecycle.go)
	w.planned = append(keep, fresh...)
	w.rescheduleFaults(fresh)
	w.scheduleQuiet()
}
