package engine

import (
	"cmp"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"math/rand/v2"
	"runtime/debug"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"github.com/seedfall/seedfall/engine/internal/goloc"
)

// exitCrashed is the exit code a node's instance is stopped with when the host kills it.
const exitCrashed = 137

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
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any     { o := *q; e := o[len(o)-1]; *q = o[:len(o)-1]; return e }
func (q eventQueue) peekAt() (int64, bool) {
	if len(q) == 0 {
		return 0, false
	}
	return q[0].at, true
}

// runOptions are the knobs of one run.
type runOptions struct {
	plan       *FaultPlan // replay this plan instead of generating one
	keepTrace  bool
	mutation   string
	reseedAt   int64 // cause: from this virtual time on, re-randomize the future
	futureSeed uint64
	wallBudget time.Duration
	traceHook  func(line string) // replay streaming
}

// world is one simulated run: nodes, virtual clock, event queue, disks, network.
type world struct {
	sim  *Sim
	cfg  *Config
	seed uint64
	opt  runOptions

	now    int64
	seq    uint64
	events eventQueue

	rngSched, rngNet, rngDisk *rand.Rand
	reseeded                  bool

	nodes    []*node
	byName   map[string]*node
	runnable []*incarnation
	yield    chan struct{}
	running  *incarnation

	net *network

	trace       []string
	traceN      int
	traceHash   hash.Hash
	applied     []Fault
	planned     []Fault
	faultGen    int
	props       map[string]*PropertyHit
	history     []histOp
	failure     *Failure
	verdict     Verdict
	done        bool
	stats       RunStats
	watchdogHit bool
	// quietGen numbers the quiet-period checks: a check of an older generation is stale.
	quietGen int
	// steps counts the world loop's iterations (events fired, switches), for the
	// watchdog's monitor; stuck says what it found when it closed stuckCh.
	steps     atomic.Int64
	stuck     string
	stopWatch func()
	wallStart time.Time
	outDir    string
	syncSites map[string]bool
	cov       coverAcc // coverage of the system under test (config "coverage")
}

// node is one process of the system under test, across its incarnations.
type node struct {
	idx      int
	name     string
	cfg      NodeConfig
	workload bool
	module   wazero.CompiledModule
	loc      *goloc.Table // nil: no source locations
	disk     *disk.FS
	inc      *incarnation // current incarnation, nil while down
	lives    int          // incarnations started so far
	pausedTo int64
	// clocks
	skewPPM  int64
	wallJump int64
	// skewSince is when the current skew took effect and skewOffset how far the node's
	// clocks were ahead of virtual time then: the skew applies to the time since, so
	// changing it mid-run never moves the monotonic clock back.
	skewSince  int64
	skewOffset int64
	// armed faults for disk ops, by incarnation
	armed []Fault
	// mid-op crash requested by a time-based fault for the current incarnation
	crashNextOp bool
	midPlanned  *Fault // the time-based fault that armed crashNextOp
	pendingMid  *Fault // a crash during a disk op that the scheduler must finish
	pendingRng  *rand.Rand
	ports       int
	// exits are the virtual times of a fail-stop node's own non-zero exits, and
	// lastExit describes the latest ("exited with code 1: open wal: ...").
	exits    []int64
	lastExit string
}

type incState int

const (
	incNew incState = iota
	incRunnable
	incRunning
	incBlocked
	incDone
)

// incarnation is one life of a node: one wasm instance.
type incarnation struct {
	w      *world
	node   *node
	n      int
	label  string
	state  incState
	resume chan struct{}
	killed bool // the host is stopping it: the next host call exits
	crash  bool // stopped by a crash fault (as opposed to the end of the run)
	exited bool
	code   uint32
	errMsg string

	wakeGen  uint64
	deadline int64 // blocked: wake at this virtual time (-1: none)
	rand     *rand.Rand
	fds      []*fdEntry
	diskOps  int64
	crashAt  int64 // crash during this disk op number (0: none)
	eioAt    map[int64]bool
	out      [3]strings.Builder // partial lines of fd 1 and 2
	outBytes int
	lastLine string
	panics   panicScan // the Go runtime's panic report in the output, if any
	mod      api.Module

	opWhat       string
	crashRng     *rand.Rand // the stream of the crash during the current disk op
	failNextSync bool
	eioFault     *Fault
	cov          *incCoverage // where the guest's coverage counters are, if built with coverage
}

func (w *world) schedule(at int64, fn func()) {
	if at < w.now {
		at = w.now
	}
	w.seq++
	heap.Push(&w.events, &event{at: at, seq: w.seq, fn: fn})
}

// tracef appends one line to the trace: virtual time, who, what.
func (w *world) tracef(who, format string, args ...any) {
	line := fmt.Sprintf("%12s %s %s", FormatDuration(w.now), who, fmt.Sprintf(format, args...))
	w.addLine(line)
}

func (w *world) addLine(line string) {
	w.traceN++
	w.traceHash.Write([]byte(line))
	w.traceHash.Write([]byte{'\n'})
	if w.opt.keepTrace {
		w.trace = append(w.trace, line)
	}
	if w.opt.traceHook != nil {
		w.opt.traceHook(line)
	}
}

func streamRand(seed uint64, name string) *rand.Rand {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}

func newWorld(s *Sim, seed uint64, opt runOptions) *world {
	w := &world{
		sim: s, cfg: s.cfg, seed: seed, opt: opt,
		rngSched:  streamRand(seed, "sched"),
		rngNet:    streamRand(seed, "net"),
		rngDisk:   streamRand(seed, "disk"),
		byName:    map[string]*node{},
		yield:     make(chan struct{}),
		traceHash: sha256.New(),
		props:     map[string]*PropertyHit{},
	}
	w.net = newNetwork(w)
	mut := opt.mutation
	for i, nc := range s.cfg.AllNodes() {
		n := &node{
			idx: i, name: nc.Name, cfg: nc, workload: i == len(s.cfg.Nodes),
			module: s.modules[i], loc: s.locs[i],
		}
		n.disk = disk.New(disk.Options{
			StrictDirs:      s.cfg.StrictDirs,
			FsyncNoop:       mut == MutFsyncNoop,
			FdatasyncNoop:   mut == MutFdatasyncNoop,
			DirFsyncNoop:    mut == MutDirFsyncNoop,
			RenameNonAtomic: mut == MutRenameNonAtom,
			ReorderSync:     mut == MutReorderSync,
			MaxBytes:        int64(s.cfg.DiskLimitMiB) << 20,
			MaxFileBytes:    int64(s.cfg.FileLimitMiB) << 20,
			TearUnit:        int64(cmp.Or(s.cfg.Faults.TearUnit, defaultTearUnit)),
			// File times follow the node's wall clock, as Linux stamps them.
			Now: func() int64 { return n.clockNS(w.now, true) },
		})
		w.nodes = append(w.nodes, n)
		w.byName[n.name] = n
	}
	return w
}

// run executes the world until the workload exits, a check fails, or the horizon.
func (w *world) run(ctx context.Context) *Result {
	w.wallStart = time.Now()
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
	for !w.done {
		w.steps.Add(1)
		if ctx.Err() != nil {
			w.verdict = VerdictError
			w.failure = &Failure{Kind: "canceled", Reason: "run canceled: " + ctx.Err().Error(), AtNS: w.now}
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
		if inc := w.pickRunnable(); inc != nil {
			if !w.switchTo(inc, wallDeadline) {
				w.verdict = VerdictWatchdog
				reason := fmt.Sprintf("%s ran for more than the watchdog budget %s (wall-clock and CPU time) without yielding (a loop without host calls?)", inc.label, w.opt.wallBudget)
				if w.stuck == stuckSlow {
					reason = fmt.Sprintf("the run took more than %s of wall-clock time (%d× the watchdog) while still making progress: the machine is slow or the horizon long (raise \"watchdog\")", runCapFactor*w.opt.wallBudget, runCapFactor)
				}
				w.failure = &Failure{Kind: "watchdog", Node: inc.label, Reason: reason, AtNS: w.now}
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
			w.verdict = VerdictHorizon
			if !ok {
				w.tracef("world", "nothing left to run and no timer pending: horizon")
			} else {
				w.tracef("world", "horizon reached")
			}
			w.failStopAtHorizon()
			w.livenessAtHorizon()
			break
		}
		w.now = at
	}
	if !w.watchdogHit {
		w.shutdown()
	}
	return w.result()
}

func (w *world) reseed() {
	w.reseeded = true
	fs := w.opt.futureSeed
	w.rngSched = streamRand(fs, "sched")
	w.rngNet = streamRand(fs, "net")
	w.rngDisk = streamRand(fs, "disk")
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
			if f.ArmedNS > 0 && f.ArmedNS <= w.opt.reseedAt {
				keep = append(keep, f)
			}
		}
		n.armed = keep
		if inc := n.inc; inc != nil {
			inc.crashAt, inc.eioAt = 0, nil
			for _, f := range keep {
				if f.Incarnation == inc.n && f.Kind == FaultCrash {
					inc.crashAt = f.DiskOp
				}
			}
		}
	}
	fresh := generatePlan(w.cfg, fs, w.now, w.nodes).Faults
	w.planned = append(keep, fresh...)
	w.rescheduleFaults(fresh)
	w.scheduleQuiet()
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

// start launches a new incarnation of n.
func (w *world) start(n *node) {
	n.lives++
	w.stats.Incarnations++
	inc := &incarnation{
		w: w, node: n, n: n.lives, label: fmt.Sprintf("%s#%d", n.name, n.lives),
		resume: make(chan struct{}), deadline: -1,
		rand: streamRand(w.seedForGuest(), fmt.Sprintf("guest/%s/%d", n.name, n.lives)),
	}
	inc.initFDs()
	n.inc = inc
	n.crashNextOp = false
	n.midPlanned = nil
	for _, f := range n.armed {
		if f.Incarnation == inc.n {
			switch f.Kind {
			case FaultCrash:
				inc.crashAt = f.DiskOp
			case FaultFsyncEIO:
				if inc.eioAt == nil {
					inc.eioAt = map[int64]bool{}
				}
				inc.eioAt[f.DiskOp] = true
			}
		}
	}
	if w.sim.antithesis {
		n.ensureAntithesisDir()
	}
	w.tracef(inc.label, "start")
	w.makeRunnable(inc)
	go inc.main()
}

func (w *world) seedForGuest() uint64 {
	if w.reseeded {
		return w.opt.futureSeed
	}
	return w.seed
}

// main is the goroutine of one incarnation: it waits for the token, then runs the guest.
func (inc *incarnation) main() {
	w := inc.w
	<-inc.resume
	if inc.killed {
		inc.finish(exitCrashed, "")
		w.yield <- struct{}{}
		return
	}
	ctx := context.WithValue(context.Background(), incKey{}, inc)
	if alloc := memoryAllocator(); alloc != nil {
		ctx = experimental.WithMemoryAllocator(ctx, alloc)
	}
	mod, err := w.sim.rt.InstantiateModule(ctx, inc.node.module, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err == nil {
		inc.mod = mod
		start := mod.ExportedFunction("_start")
		if start == nil {
			err = fmt.Errorf("module has no _start")
		} else {
			_, err = start.Call(ctx)
		}
	}
	code, msg := uint32(0), ""
	if err != nil {
		if ee, ok := err.(*sys.ExitError); ok {
			code = ee.ExitCode()
		} else {
			code, msg = 2, err.Error()
		}
	}
	if mod != nil {
		inc.collectCoverage(mod.Memory())
		mod.Close(context.Background())
	}
	inc.finish(code, msg)
	w.yield <- struct{}{}
}

func (inc *incarnation) finish(code uint32, msg string) {
	inc.flushOutput()
	inc.exited = true
	inc.code = code
	inc.errMsg = msg
	inc.state = incDone
}

// park gives the token back to the scheduler and waits to be resumed. A host function
// calls it with inc.state already set (runnable or blocked).
func (inc *incarnation) park() {
	inc.w.yield <- struct{}{}
	<-inc.resume
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

// afterExit handles an incarnation that stopped: crash, own exit, or end of run.
func (w *world) afterExit(inc *incarnation) {
	n := inc.node
	if n.inc == inc {
		n.inc = nil
	}
	w.net.nodeDown(inc)
	w.collectAntithesis(inc)
	if inc.crash {
		if n.pendingMid != nil && !w.done {
			// Crashed during a disk op: finish the crash here.
			f, rng := *n.pendingMid, n.pendingRng
			n.pendingMid, n.pendingRng = nil, nil
			w.crashed(n, f, rng)
		}
		return // an idle crash is finished by its fault handler
	}
	if w.done {
		return
	}
	detail := ""
	if inc.errMsg != "" {
		detail = ": " + inc.errMsg
	}
	if !(inc.code != 0 && !inc.killed && n.cfg.failStop()) {
		w.tracef(inc.label, "exited with code %d%s", inc.code, detail)
	}
	if n.workload {
		w.done = true
		if inc.code == 0 && !inc.killed {
			w.verdict = VerdictPass
			return
		}
		reason := inc.lastLine
		if pr := inc.panicReason(); pr != "" {
			reason = pr
		}
		if reason == "" {
			reason = fmt.Sprintf("workload exited with code %d%s", inc.code, detail)
		}
		w.fail("workload-exit", inc.label, reason)
		return
	}
	if inc.code != 0 && !inc.killed && n.cfg.failStop() {
		w.failStopExit(inc, detail)
		return
	}
	if inc.code != 0 && !inc.killed {
		reason := fmt.Sprintf("%s crashed: exit_code(%d)", inc.label, inc.code)
		if pr := inc.panicReason(); pr != "" {
			reason += ": " + pr
		} else if inc.lastLine != "" {
			reason += ": " + inc.lastLine
		}
		if inc.errMsg != "" {
			reason += ": " + inc.errMsg
		}
		w.fail("node-exit", inc.label, reason)
	}
}

// failStopExit handles the own non-zero exit of a fail-stop node: it is restarted after
// the restart delay over its disk as it is (a process exit loses nothing of the page
// cache), unless it exceeds its restart budget, which fails the run.
func (w *world) failStopExit(inc *incarnation, detail string) {
	n := inc.node
	last := fmt.Sprintf("exited with code %d", inc.code)
	if pr := inc.panicReason(); pr != "" {
		last += ": " + pr
	} else if inc.lastLine != "" {
		last += ": " + inc.lastLine
	}
	last += detail
	n.lastExit = last
	n.exits = append(n.exits, w.now)
	window := int64(cmp.Or(n.cfg.RestartWindow, defaultRestartWindow))
	budget := cmp.Or(n.cfg.MaxRestarts, defaultMaxRestarts)
	recent := n.recentExits(w.now, window)
	if len(recent) > budget {
		w.tracef(inc.label, "exited with code %d%s (fail-stop)", inc.code, detail)
		w.fail("fail-stop-loop", n.name, fmt.Sprintf("fail-stop restart loop: exited %d times in %s (more than max_restarts %d within restart_window %s); last %s",
			len(recent), FormatDuration(w.now-recent[0]), budget, FormatDuration(window), last))
		return
	}
	at := w.now + int64(w.cfg.Faults.RestartDelay)
	w.tracef(inc.label, "exited with code %d%s (fail-stop): restart at %s", inc.code, detail, FormatDuration(at))
	w.stats.FailStopRestarts++
	w.schedule(at, func() {
		if n.inc == nil && !w.done {
			w.start(n)
		}
	})
}

// recentExits returns the node's own exits within window before now (inclusive).
func (n *node) recentExits(now, window int64) []int64 {
	i := len(n.exits)
	for i > 0 && n.exits[i-1] >= now-window {
		i--
	}
	return n.exits[i:]
}

// failStopAtHorizon fails a run that reached the horizon while a fail-stop node still
// exits again and again: at least twice within its restart window before the horizon,
// the last time after the workload could no longer finish.
func (w *world) failStopAtHorizon() {
	for _, n := range w.nodes {
		if !n.cfg.failStop() || len(n.exits) == 0 {
			continue
		}
		window := int64(cmp.Or(n.cfg.RestartWindow, defaultRestartWindow))
		if recent := n.recentExits(w.now, window); len(recent) >= 2 {
			w.fail("fail-stop-loop", n.name, fmt.Sprintf("fail-stop restart loop: still exiting at the horizon: exited %d times in the last %s (%d in the whole run); last %s",
				len(recent), FormatDuration(window), len(n.exits), n.lastExit))
			return
		}
	}
}

// fail records the first failure and ends the run.
func (w *world) fail(kind, who, reason string) {
	if w.failure != nil {
		return
	}
	w.failure = &Failure{Kind: kind, Node: who, Reason: reason, AtNS: w.now}
	if who != "" && !strings.HasPrefix(reason, who) {
		w.failure.Reason = who + ": " + reason
	}
	w.verdict = VerdictFail
	w.done = true
	w.tracef("world", "FAIL %s", w.failure.Reason)
}

// kill stops a live incarnation from the scheduler goroutine and waits for it.
func (w *world) kill(inc *incarnation, crash bool) {
	if inc == nil || inc.state == incDone {
		return
	}
	inc.killed = true
	inc.crash = crash
	// Remove it from the runnable set, then let it run into its exit.
	for i, r := range w.runnable {
		if r == inc {
			w.runnable = append(w.runnable[:i], w.runnable[i+1:]...)
			break
		}
	}
	inc.state = incRunning
	inc.resume <- struct{}{}
	<-w.yield
	inc.state = incDone
	w.afterExit(inc)
}

// shutdown stops every live incarnation at the end of the run.
func (w *world) shutdown() {
	w.done = true
	for _, n := range w.nodes {
		if n.inc != nil {
			w.kill(n.inc, false)
		}
	}
}

func (w *world) result() *Result {
	r := &Result{
		Seed:       w.seed,
		Verdict:    w.verdict,
		Failure:    w.failure,
		Faults:     w.applied,
		TraceLines: w.traceN,
		EndNS:      w.now,
		Stats:      w.stats,
	}
	if r.Verdict == "" {
		r.Verdict = VerdictPass
	}
	if r.Faults == nil {
		r.Faults = []Fault{}
	}
	if r.Failure == nil && r.Verdict != VerdictHorizon && r.Verdict != VerdictWatchdog {
		w.checkHistory(r)
	}
	if r.Failure != nil && r.Failure.Signature == "" {
		r.Failure.Signature = Signature(r)
	}
	names := make([]string, 0, len(w.props))
	for k := range w.props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		r.Properties = append(r.Properties, *w.props[k])
	}
	for _, k := range sortedSet(w.syncSites) {
		r.SyncSites = append(r.SyncSites, k)
	}
	sum := w.traceHash.Sum(nil)
	r.TraceHash = hex.EncodeToString(sum[:16])
	if w.opt.keepTrace {
		r.Trace = w.trace
	}
	if w.cfg.Coverage != nil {
		r.Coverage = w.cov.coverage()
	}
	r.Stats.WallNS = int64(time.Since(w.wallStart))
	return r
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
