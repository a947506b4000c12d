package engine

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"

	"github.com/seedfall/seedfall/engine/internal/disk"
)

// generatePlan draws a fault plan from the config's rates for virtual times in
// (from, horizon], from the plan stream of seed. It is a pure function of its inputs.
func generatePlan(cfg *Config, seed uint64, from int64, nodes []*node) *FaultPlan {
	r := streamRand(seed, "plan")
	f := cfg.Faults
	horizon := int64(cfg.Horizon)
	maxFaults := f.maxFaults()
	start := max(from, int64(f.StartAfter))
	var servers, all []string
	for _, n := range nodes {
		all = append(all, n.name)
		if !n.workload {
			servers = append(servers, n.name)
		}
	}
	var out []Fault
	poisson := func(rate float64, mk func(at int64) (Fault, bool)) {
		if rate <= 0 {
			return
		}
		t := float64(start)
		for len(out) < 4*maxFaults {
			t += r.ExpFloat64() / rate * 1e9
			if t > float64(horizon) {
				return
			}
			if fl, ok := mk(int64(t)); ok {
				out = append(out, fl)
			}
		}
	}
	jitter := func(mean Duration) int64 {
		return int64(float64(mean) * (0.5 + r.Float64()))
	}
	pick := func(names []string) string { return names[r.IntN(len(names))] }
	if len(servers) > 0 {
		poisson(f.CrashPerSec, func(at int64) (Fault, bool) {
			fl := Fault{AtNS: at, Kind: FaultCrash, Node: pick(servers), RestartNS: jitter(f.RestartDelay)}
			fl.MidOp = r.Float64() < f.CrashMidOp.P
			if fl.MidOp && f.CrashPlacement == PlacementSpread {
				fl.SkipOps = skipOps(seed, at)
			}
			return fl, true
		})
		poisson(f.PausePerSec, func(at int64) (Fault, bool) {
			return Fault{AtNS: at, Kind: FaultPause, Node: pick(servers), DurationNS: jitter(f.PauseDuration)}, true
		})
		poisson(f.ClockJumpPerSec, func(at int64) (Fault, bool) {
			j := int64((2*r.Float64() - 1) * float64(f.ClockJump))
			return Fault{AtNS: at, Kind: FaultClockJump, Node: pick(servers), JumpNS: j}, true
		})
	}
	if len(all) > 1 {
		poisson(f.PartitionPerSec, func(at int64) (Fault, bool) {
			n := pick(all)
			var peers []string
			for _, p := range all {
				if p != n {
					peers = append(peers, p)
				}
			}
			return Fault{AtNS: at, Kind: FaultPartition, Node: n, Peers: peers,
				OneWay: r.Float64() < f.OneWayShare, DurationNS: int64(r.ExpFloat64() * float64(f.PartitionDuration))}, true
		})
		poisson(f.ResetPerSec, func(at int64) (Fault, bool) {
			return Fault{AtNS: at, Kind: FaultReset, Node: pick(all)}, true
		})
		poisson(f.LatencySpikePerSec, func(at int64) (Fault, bool) {
			return Fault{AtNS: at, Kind: FaultLatency, Node: pick(all), LatencyNS: int64(r.Float64() * float64(f.LatencySpike)), DurationNS: int64(1e9)}, true
		})
		// Group partitions come last, so that a config without them draws exactly the
		// plan it drew before they existed.
		poisson(f.SplitPerSec, func(at int64) (Fault, bool) {
			groups := splitGroups(r, all)
			return Fault{AtNS: at, Kind: FaultSplit, Node: groups[0][0], Groups: groups,
				DurationNS: int64(r.ExpFloat64() * float64(f.PartitionDuration))}, true
		})
	}
	// Process deaths, last for the same reason.
	if len(servers) > 0 {
		poisson(f.KillPerSec, func(at int64) (Fault, bool) {
			return Fault{AtNS: at, Kind: FaultKill, Node: pick(servers), RestartNS: jitter(f.RestartDelay)}, true
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AtNS < out[j].AtNS })
	if len(out) > maxFaults {
		out = out[:maxFaults]
	}
	if out == nil {
		out = []Fault{}
	}
	return &FaultPlan{Seed: seed, Faults: out}
}

// Values of faults.crash_placement.
const (
	PlacementNextOp = "next_op"
	PlacementSpread = "spread"
)

// drawnPlacement is the placement the config's seeds draw mid-op crashes with, or ""
// when they draw none (no crashes, or crash_mid_op 0).
func (f *FaultConfig) drawnPlacement() string {
	if f.CrashPerSec <= 0 || f.CrashMidOp == nil || f.CrashMidOp.P <= 0 {
		return ""
	}
	if f.CrashPlacement == "" {
		return PlacementSpread
	}
	return f.CrashPlacement
}

// maxSkipOps bounds the ops a spread mid-op crash skips: skipOps draws 0 to
// maxSkipOps-1.
const maxSkipOps = 64

// skipOps draws how many matching disk ops a spread mid-op crash armed at time at lets
// pass. Half the crashes skip none: they land in the next op, as with "next_op", so a
// bug at a request's first op (a torn append) is found about as soon as before. The
// other half skip 1 to maxSkipOps-1 ops, log-uniform: op k after the armed time gets a
// weight of about 1/k, so a request's second op is the likeliest of those, and an op 40
// deep in a compaction still gets about one crash in 300. The draw comes from a stream of
// its own, keyed by the seed and the time, so that the plan's other draws are exactly
// those of the "next_op" placement.
func skipOps(seed uint64, at int64) int64 {
	r := streamRand(seed^uint64(at)*0x9e3779b97f4a7c15, "crash-skip")
	if r.IntN(2) == 0 {
		return 0
	}
	return int64(math.Floor(math.Exp(r.Float64() * math.Log(maxSkipOps))))
}

// splitGroups draws a random split of names (at least two) into groups, smallest first,
// each group in config order. Two nodes split 1|1. With three or more, one group is a
// strict majority and the others minorities: two groups (1|2, 1|3, 2|3, ...) or, for
// five or more nodes, three groups one time in four (3|1|1, 4|1|2, ...), so that every
// minority of a quorum system is exercised.
func splitGroups(r *rand.Rand, names []string) [][]string {
	n := len(names)
	order := r.Perm(n)
	var sizes []int
	switch {
	case n == 2:
		sizes = []int{1, 1}
	case n >= 5 && r.IntN(4) == 0:
		major := n/2 + 1
		a := 1 + r.IntN(n-major-1) // the first minority; the second gets the rest
		sizes = []int{a, n - major - a, major}
	default:
		major := n/2 + 1
		minor := n - major
		minor = 1 + r.IntN(minor) // 1 .. n-major
		sizes = []int{minor, n - minor}
	}
	sort.Ints(sizes)
	groups := make([][]string, len(sizes))
	k := 0
	for i, sz := range sizes {
		idx := append([]int(nil), order[k:k+sz]...)
		sort.Ints(idx)
		for _, j := range idx {
			groups[i] = append(groups[i], names[j])
		}
		k += sz
	}
	return groups
}

// clockSkews draws each node's clock drift.
func clockSkews(cfg *Config, seed uint64, nodes []*node) {
	if cfg.Faults.ClockSkewPPM == 0 {
		return
	}
	r := streamRand(seed, "skew")
	for _, n := range nodes {
		n.skewPPM = r.Int64N(2*cfg.Faults.ClockSkewPPM+1) - cfg.Faults.ClockSkewPPM
	}
}

// installPlan puts the run's faults on the event queue: the given plan, or one drawn
// from the seed.
func (w *world) installPlan() {
	if w.swarm != nil {
		w.tracef("world", "swarm: %s", w.swarm)
	}
	var plan *FaultPlan
	switch {
	case w.opt.plan != nil:
		plan = w.opt.plan
	case w.awaitsSetup():
		plan = &FaultPlan{Faults: []Fault{}} // drawn at the setup signal (sdk_lifecycle.go)
	default:
		plan = generatePlan(w.cfg, w.seed, 0, w.nodes)
	}
	clockSkews(w.cfg, w.seed, w.nodes)
	for _, n := range w.nodes {
		if n.skewPPM != 0 {
			w.tracef("world", "clock of %s drifts %+dppm", n.name, n.skewPPM)
		}
	}
	// A plan's directed faults are a record: the workload asks for them again.
	w.planned = append([]Fault(nil), undirected(plan.Faults)...)
	// The trace does not list the plan: a generated plan and the saved plan of the faults
	// it applied must give byte-identical traces. Faults are traced as they fire.
	w.rescheduleFaults(w.planned)
	// The config's schedule: the test's own faults, in every run (a plan recorded them as
	// directed, so it did not install them above).
	if len(w.cfg.Schedule) > 0 {
		sched := make([]Fault, len(w.cfg.Schedule))
		for i, f := range w.cfg.Schedule {
			f.Directed = true
			sched[i] = f
		}
		w.rescheduleFaults(sched)
	}
}

func (w *world) rescheduleFaults(fs []Fault) {
	for _, f := range fs {
		f := f
		n := w.byName[f.Node]
		if n == nil {
			w.tracef("world", "fault for unknown node %q ignored", f.Node)
			continue
		}
		if f.isPinned() {
			// Exact: armed for that incarnation's disk op.
			if f.Incarnation == 0 {
				f.Incarnation = 1
			}
			n.armed = append(n.armed, f)
			if n.inc != nil && n.inc.n == f.Incarnation {
				specOf(f.Kind).arm(n.inc, f)
			}
			continue
		}
		gen := w.faultGen
		w.schedule(f.AtNS, func() {
			// A future re-randomized by cause cancels the planned faults after its moment,
			// not the test's own.
			if gen == w.faultGen || f.Directed {
				w.applyFault(f)
			}
		})
	}
}

// applyFault fires a time-based fault.
func (w *world) applyFault(f Fault) {
	n := w.byName[f.Node]
	f.AtNS = w.now
	if !f.Directed && w.quiet(f) {
		return
	}
	spec := specOf(f.Kind)
	if spec == nil {
		panic(fmt.Sprintf("unknown fault kind %q", f.Kind)) // plans are validated when read
	}
	spec.apply(w, n, f)
}

// crashed finishes a crash: the disk loses what was not durable, and the node restarts
// after the fault's delay.
func (w *world) crashed(n *node, f Fault, rng disk.Chooser) {
	rep := n.disk.Crash(rng, w.cfg.Faults.TornWrites)
	w.tracef("fault", "%s disk after crash: %s", n.name, rep)
	if s, ok := rng.(*stateChooser); ok {
		// An explicit crash state: say which durable image it left, and whether the plan's
		// state fit this disk (it does when the plan was made from this run).
		w.tracef("fault", "%s crash state %s: image %s%s", n.name, formatState(s.state), n.disk.DurableImage(), s.misfit())
	}
	w.applyCorrupts(n)
	n.nextBuild = f.Build
	if f.RestartNS > 0 {
		w.schedule(w.now+f.RestartNS, func() {
			if n.inc == nil && !w.done && !n.heldDown {
				w.start(n)
			}
		})
	}
}

// clockNS returns node n's view of a clock: monotonic (id 1) drifts with skew but never
// goes back; realtime (id 0) also carries jumps.
func (n *node) clockNS(now int64, realtime bool) int64 {
	t := now + n.skewOffset
	if n.skewPPM != 0 {
		t += skewDrift(now-n.skewSince, n.skewPPM)
	}
	if realtime {
		// An arbitrary, fixed epoch: 2025-01-01T00:00:00Z, so guests see plausible dates.
		t += 1735689600*1e9 + n.wallJump
	}
	return t
}

// setSkew changes node n's clock drift at virtual time now, keeping its clocks
// continuous: the new rate applies from now on.
func (n *node) setSkew(now, ppm int64) {
	if n.skewPPM != 0 {
		n.skewOffset += skewDrift(now-n.skewSince, n.skewPPM)
	}
	n.skewSince = now
	n.skewPPM = ppm
}

// skewDrift is how far a clock at ppm runs ahead of virtual time over d ns:
// d*ppm/1e6, rounded to the nearest ns (halves away from zero). The product is taken in
// 128 bits: d*ppm overflows int64 for d of hours.
func skewDrift(d, ppm int64) int64 {
	neg := (d < 0) != (ppm < 0)
	q := mulDiv(absU(d), absU(ppm), 1_000_000, 500_000)
	if neg {
		return -int64(min(q, math.MaxInt64))
	}
	return int64(min(q, math.MaxInt64))
}

// timerDeadline converts a timeout of the node's own clock (ns from now) into the
// virtual time at which it expires: its clocks run at rate 1 + ppm/1e6, so an own-time
// timeout d lasts d*1e6/(1e6+ppm) of virtual time, rounded up so that the timer never
// fires before the node's clock reaches it. The result saturates at math.MaxInt64 (a
// timeout of centuries never fires) instead of overflowing; a negative timeout is a
// WASI u64 timeout beyond MaxInt64, which never fires either.
func (n *node) timerDeadline(now, timeout int64) int64 {
	if timeout < 0 {
		return math.MaxInt64
	}
	d := uint64(timeout)
	if ppm := n.skewPPM; ppm != 0 {
		den := 1_000_000 + ppm
		if den <= 0 {
			return math.MaxInt64 // the node's clock stands still or runs back: never
		}
		d = mulDiv(d, 1_000_000, uint64(den), uint64(den)-1)
	}
	if d > uint64(math.MaxInt64-now) {
		return math.MaxInt64
	}
	return now + int64(d)
}

// mulDiv returns (a*b + add) / c in 128-bit arithmetic, saturated to MaxUint64.
func mulDiv(a, b, c, add uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	var carry uint64
	lo, carry = bits.Add64(lo, add, 0)
	hi += carry
	if hi >= c {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, c)
	return q
}

func absU(x int64) uint64 {
	if x < 0 {
		return uint64(-(x + 1)) + 1
	}
	return uint64(x)
}

// partition cuts the links of f.Node to f.Peers for f.DurationNS.
func (w *world) partition(f Fault) {
	n := w.byName[f.Node]
	var peers []*node
	for _, p := range f.Peers {
		if pn := w.byName[p]; pn != nil && pn != n {
			peers = append(peers, pn)
		}
	}
	apply := func(d int) {
		for _, p := range peers {
			w.net.SetCut(n.host, p.host, d)
			if !f.OneWay {
				w.net.SetCut(p.host, n.host, d)
			}
		}
	}
	apply(1)
	if f.Directed && f.DurationNS == 0 {
		// Until the workload heals it, link by link (directed.go).
		for _, p := range peers {
			w.heldCuts[cutKey(n.name, p.name)] = heldCut{apply: func(d int) {
				w.net.SetCut(n.host, p.host, d)
				if !f.OneWay {
					w.net.SetCut(p.host, n.host, d)
				}
			}}
		}
		return
	}
	w.schedule(w.now+f.DurationNS, func() {
		apply(-1)
		w.tracef("fault", "heal %s", f.Node)
	})
}

// addLatency adds f.LatencyNS to every link of f.Node, both ways, for f.DurationNS.
func (w *world) addLatency(f Fault) {
	n := w.byName[f.Node]
	var peers []*node
	for _, p := range w.nodes {
		if p != n {
			peers = append(peers, p)
		}
	}
	add := func(d int64) {
		for _, p := range peers {
			w.net.AddLatency(n.host, p.host, d)
			w.net.AddLatency(p.host, n.host, d)
		}
	}
	add(f.LatencyNS)
	w.schedule(w.now+f.DurationNS, func() { add(-f.LatencyNS) })
}

// split cuts every link between two different groups of f.Groups, both ways, for
// f.DurationNS (FaultSplit). Names that are not nodes are skipped.
func (w *world) split(f Fault) {
	type pair struct{ a, b *node }
	var cuts []pair
	for i, g := range f.Groups {
		for _, h := range f.Groups[i+1:] {
			for _, a := range g {
				for _, b := range h {
					an, bn := w.byName[a], w.byName[b]
					if an != nil && bn != nil && an != bn {
						cuts = append(cuts, pair{an, bn})
					}
				}
			}
		}
	}
	apply := func(d int) {
		for _, c := range cuts {
			w.net.SetCut(c.a.host, c.b.host, d)
			w.net.SetCut(c.b.host, c.a.host, d)
		}
	}
	apply(1)
	w.schedule(w.now+f.DurationNS, func() {
		apply(-1)
		w.tracef("fault", "heal split %s", f.groupsText())
	})
}
