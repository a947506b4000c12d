package explore

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// Entry is a corpus run: a seed, the faults it applied (a plan that replays it), and
// what the operators aim at (its length, its disk ops).
type Entry struct {
	Seed   uint64
	Faults []engine.Fault
	// Swarm is the run's swarm draw (nil: no swarm); runs derived from the entry keep it,
	// except the reswarm operator's.
	Swarm engine.SwarmDraw
	EndNS int64
	Ops   []DiskOp
	// New is how many features this run reached first; Features are all of them.
	New      int
	Features []string
}

// Env is what operators need from the config: fresh faults drawn from its rates, the
// mean restart delay, and which crash features the exploration has already seen.
type Env struct {
	// Generate draws the config's faults for (from, horizon] from a plan seed.
	Generate func(seed uint64, from int64) []engine.Fault
	// GenerateSwarm draws faults as Generate does, at the rates of a swarm draw; DrawSwarm
	// draws the swarm of a seed. Both are set only when the config asks for swarm, which
	// adds the reswarm operator.
	GenerateSwarm func(sw engine.SwarmDraw, seed uint64, from int64) []engine.Fault
	DrawSwarm     func(seed uint64) engine.SwarmDraw
	// RestartNS is the mean restart delay of a crash.
	RestartNS int64
	// Seen reports whether a feature was reached by an earlier run.
	Seen func(feature string) bool
	// DeviceKinds are the write-side device faults the config turns on (corrupt,
	// misdirected_write, lost_write, write_eio with a knob above 0): the device-at-op
	// operator pins them to writes, since a run with a plan draws none at their rates.
	DeviceKinds []engine.FaultKind
	// DeviceAims reports whether the config aims a device fault of kind at path (its
	// knob's paths; nil: every path).
	DeviceAims func(kind engine.FaultKind, path string) bool
}

// Op is a mutation operator: it derives a run (seed and plan) from a corpus entry, or
// reports that it does not apply (a crash to move when the plan has none).
type Op struct {
	Name string
	// Prior is the operator's weight before it has a record: the crash operators come
	// first, because crash recovery is where the bugs seedfall finds live.
	Prior float64
	Apply func(r *rand.Rand, e *Entry, env *Env) (seed uint64, faults []engine.Fault, ok bool)
	// ApplySwarm, when set in place of Apply, also gives the derived run's swarm draw
	// (the other operators keep the entry's).
	ApplySwarm func(r *rand.Rand, e *Entry, env *Env) (seed uint64, faults []engine.Fault, sw engine.SwarmDraw, ok bool)
}

// Ops are the operators, in a fixed order (the explorer's draws index into it).
var Ops = []Op{
	{"crash-neighbour", 2, crashNeighbour, nil},
	{"crash-at-op", 3, crashAtOp, nil},
	{"crash-restarted", 3, crashRestarted, nil},
	{"add-fault", 1, addFault, nil},
	{"drop-fault", 1, dropFault, nil},
	{"shift-fault", 1, shiftFault, nil},
	{"partition", 1, reshapePartition, nil},
	{"new-future", 1, newFuture, nil},
	{"reseed", 1, reseed, nil},
}

// swarmOp varies the swarm draw (swarm testing): the parent's seed under another draw of
// which fault kinds are on and at what rates, with a plan generated anew at them. It
// joins Ops only when the config asks for swarm, so that an exploration without swarm
// draws exactly as before.
var swarmOp = Op{Name: "reswarm", Prior: 1, ApplySwarm: reswarm}

// deviceOp pins a device fault to one of the run's writes. A run with a plan draws no
// device faults at the config's rates (the plan rules what happens), so before it an
// exploration of a config with device faults never ran one. It joins Ops only when the
// config turns a write-side device fault on, so that other explorations draw exactly as
// before.
var deviceOp = Op{Name: "device-at-op", Prior: 2, Apply: deviceAtOp}

// ops are the operators of an exploration in env.
func (env *Env) ops() []Op {
	ops := Ops
	if env.DrawSwarm != nil && env.GenerateSwarm != nil {
		ops = append(append([]Op(nil), ops...), swarmOp)
	}
	if len(env.DeviceKinds) > 0 {
		ops = append(append([]Op(nil), ops...), deviceOp)
	}
	return ops
}

// deviceAtOp adds a device fault of one of env's kinds, pinned to one of e's writes.
func deviceAtOp(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	if len(env.DeviceKinds) == 0 {
		return 0, nil, false
	}
	kind := env.DeviceKinds[r.IntN(len(env.DeviceKinds))]
	var writes []int
	for i, op := range e.Ops {
		// Class is "write PATH SITE": a write, at a path the knob is aimed at.
		f := strings.Fields(op.Class)
		if len(f) >= 2 && f[0] == "write" && (env.DeviceAims == nil || env.DeviceAims(kind, f[1])) {
			writes = append(writes, i)
		}
	}
	if len(writes) == 0 {
		return 0, nil, false
	}
	op := e.Ops[writes[r.IntN(len(writes))]]
	f := engine.Fault{AtNS: op.AtNS, Kind: kind, Node: op.Node, DiskOp: op.N, Incarnation: op.Incarnation}
	return e.Seed, engineapi.RenumberFaults(insert(clone(e.Faults), f)), true
}

// generate draws faults for e's descendants: at e's swarm draw when it has one.
func (env *Env) generate(e *Entry, seed uint64, from int64) []engine.Fault {
	if e.Swarm != nil && env.GenerateSwarm != nil {
		return env.GenerateSwarm(e.Swarm, seed, from)
	}
	return env.Generate(seed, from)
}

// reswarm runs e's seed under a new swarm draw and a plan generated at its rates.
func reswarm(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, engine.SwarmDraw, bool) {
	if env.DrawSwarm == nil || env.GenerateSwarm == nil {
		return 0, nil, nil, false
	}
	sw := env.DrawSwarm(r.Uint64())
	return e.Seed, env.GenerateSwarm(sw, e.Seed, 0), sw, true
}

// crashNeighbour moves a crash pinned to a disk op to one of the ops around it (up to
// three before or after), where the same write may tear at another point or a rename
// may not yet have happened.
func crashNeighbour(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	idx := indexes(e.Faults, func(f engine.Fault) bool { return f.Kind == engine.FaultCrash && f.DiskOp > 0 })
	if len(idx) == 0 {
		return 0, nil, false
	}
	fs := clone(e.Faults)
	i := idx[r.IntN(len(idx))]
	d := int64(1 + r.IntN(3))
	if r.IntN(2) == 0 {
		d = -d
	}
	f := &fs[i]
	f.DiskOp = max(1, f.DiskOp+d)
	if f.DiskOp == e.Faults[i].DiskOp {
		f.DiskOp++
	}
	f.Where = ""
	return e.Seed, engineapi.RenumberFaults(fs), true
}

// crashAtOp pins a new crash to one of the run's disk ops, preferring ops of a class
// (kind, path pattern, call site) no crash has interrupted yet in this exploration, and
// writes (whose crash feature names the outcome, so they never count as interrupted:
// each crash draws anew how much of the write lands): the operator that steers crashes
// into the I/O paths the sweep has not broken.
func crashAtOp(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	if len(e.Ops) == 0 {
		return 0, nil, false
	}
	var fresh []int
	if env.Seen != nil {
		seenClass := map[string]bool{}
		for i, op := range e.Ops {
			s, ok := seenClass[op.Class]
			if !ok {
				s = env.Seen("crash during " + op.Class)
				seenClass[op.Class] = s
			}
			if !s {
				fresh = append(fresh, i)
			}
		}
	}
	var op DiskOp
	if len(fresh) > 0 && r.IntN(4) != 0 {
		// Pick a class first, then an op of it: a class with one op (meta.sum's write)
		// is as likely as one with a thousand (the message log's).
		byClass := map[string][]int{}
		var classes []string
		for _, i := range fresh {
			c := e.Ops[i].Class
			if byClass[c] == nil {
				classes = append(classes, c)
			}
			byClass[c] = append(byClass[c], i)
		}
		sort.Strings(classes)
		ops := byClass[classes[r.IntN(len(classes))]]
		op = e.Ops[ops[r.IntN(len(ops))]]
	} else {
		op = e.Ops[r.IntN(len(e.Ops))]
	}
	return e.Seed, crashAt(r, e, env, op), true
}

// crashRestarted pins a new crash to a disk op of an incarnation that started after a
// crash: it breaks the recovered state again, where a recovery that repaired the wrong
// thing shows (a log appended after a torn tail loses what comes after it).
func crashRestarted(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	type life struct {
		node string
		inc  int
	}
	byLife := map[life][]int{}
	var lives []life
	for i, op := range e.Ops {
		if op.Incarnation < 2 {
			continue
		}
		l := life{op.Node, op.Incarnation}
		if byLife[l] == nil {
			lives = append(lives, l)
		}
		byLife[l] = append(byLife[l], i)
	}
	if len(lives) == 0 {
		return 0, nil, false
	}
	ops := byLife[lives[r.IntN(len(lives))]]
	return e.Seed, crashAt(r, e, env, e.Ops[ops[r.IntN(len(ops))]]), true
}

// crashAt adds a crash pinned to op to e's faults.
func crashAt(r *rand.Rand, e *Entry, env *Env, op DiskOp) []engine.Fault {
	f := engine.Fault{AtNS: op.AtNS, Kind: engine.FaultCrash, Node: op.Node, DiskOp: op.N,
		Incarnation: op.Incarnation, RestartNS: restartDelay(r, env)}
	// The parent's faults after the new crash may no longer make sense for the run it
	// starts (they were aimed at another interleaving), but keeping them keeps what the
	// parent reached after it; the faults on the crashed incarnation's later ops cannot
	// fire and are dropped.
	var fs []engine.Fault
	for _, g := range e.Faults {
		if g.DiskOp > 0 && g.Node == op.Node && g.Incarnation == op.Incarnation && g.DiskOp >= op.N {
			continue
		}
		fs = append(fs, g)
	}
	return engineapi.RenumberFaults(insert(fs, f))
}

// addFault adds one fault drawn from the config's rates at a random time of the run.
func addFault(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	if env.Generate == nil {
		return 0, nil, false
	}
	from := r.Int64N(max(e.EndNS, 1))
	gen := env.generate(e, r.Uint64(), from)
	if len(gen) == 0 {
		return 0, nil, false
	}
	return e.Seed, engineapi.RenumberFaults(insert(clone(e.Faults), gen[0])), true
}

// dropFault removes one fault.
func dropFault(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	if len(e.Faults) == 0 {
		return 0, nil, false
	}
	i := r.IntN(len(e.Faults))
	fs := append(clone(e.Faults[:i]), e.Faults[i+1:]...)
	return e.Seed, engineapi.RenumberFaults(fs), true
}

// shiftFault moves a fault that fires by time earlier or later, by up to half its time
// or 100ms, whichever is more. A crash pinned to a disk op becomes a crash armed by time
// that fires in the first disk op after its new time (or idle, as the parent's was).
func shiftFault(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	if len(e.Faults) == 0 {
		return 0, nil, false
	}
	fs := clone(e.Faults)
	i := r.IntN(len(fs))
	f := fs[i]
	span := max(f.AtNS/2, 100_000_000)
	f.AtNS = max(0, f.AtNS+r.Int64N(2*span+1)-span)
	if f.DiskOp > 0 {
		f.MidOp = true
		f.DiskOp, f.Incarnation, f.ArmedNS, f.StreamNS, f.Where = 0, 0, 0, 0, ""
	}
	fs = append(fs[:i], fs[i+1:]...)
	return e.Seed, engineapi.RenumberFaults(insert(fs, f)), true
}

// reshapePartition widens, narrows or moves a partition, or turns it one-way or back.
func reshapePartition(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	idx := indexes(e.Faults, func(f engine.Fault) bool { return f.Kind == engine.FaultPartition })
	if len(idx) == 0 {
		return 0, nil, false
	}
	fs := clone(e.Faults)
	i := idx[r.IntN(len(idx))]
	f := fs[i]
	f.Peers = slices.Clone(f.Peers)
	switch r.IntN(4) {
	case 0: // widen
		f.DurationNS = max(f.DurationNS, 1_000_000) * int64(2+r.IntN(3))
	case 1: // narrow
		f.DurationNS /= int64(2 + r.IntN(3))
	case 2: // move
		span := max(f.AtNS/2, 200_000_000)
		f.AtNS = max(0, f.AtNS+r.Int64N(2*span+1)-span)
	case 3:
		f.OneWay = !f.OneWay
	}
	fs = append(fs[:i], fs[i+1:]...)
	return e.Seed, insert(fs, f), true
}

// newFuture keeps the plan up to a moment of the run (just before or after one of its
// faults, or a random time) and draws every fault after it anew from the config's rates:
// the run replays its parent exactly up to the moment and takes another future.
func newFuture(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	if env.Generate == nil || e.EndNS <= 0 {
		return 0, nil, false
	}
	var cut int64
	if len(e.Faults) > 0 && r.IntN(2) == 0 {
		f := e.Faults[r.IntN(len(e.Faults))]
		cut = f.AtNS
		if r.IntN(2) == 0 {
			cut = max(0, cut-1)
		}
	} else {
		cut = r.Int64N(e.EndNS)
	}
	var fs []engine.Fault
	for _, f := range e.Faults {
		if f.AtNS <= cut {
			fs = append(fs, f)
		}
	}
	fs = append(fs, env.generate(e, r.Uint64(), cut)...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].AtNS < fs[j].AtNS })
	return e.Seed, engineapi.RenumberFaults(fs), true
}

// reseed runs the parent's plan under another seed: the same faults, another
// interleaving, other latencies and other tears.
func reseed(r *rand.Rand, e *Entry, env *Env) (uint64, []engine.Fault, bool) {
	s := freshSeed(r)
	if s == e.Seed {
		s++
	}
	return s, clone(e.Faults), true
}

// freshSeed draws a seed for a run of its own (readable in a replay command).
func freshSeed(r *rand.Rand) uint64 { return 1 + r.Uint64N(1_000_000_000) }

func restartDelay(r *rand.Rand, env *Env) int64 {
	mean := env.RestartNS
	if mean <= 0 {
		mean = 250_000_000
	}
	return int64(float64(mean) * (0.5 + r.Float64()))
}

func clone(fs []engine.Fault) []engine.Fault {
	out := make([]engine.Fault, len(fs))
	copy(out, fs)
	for i := range out {
		out[i].Peers = slices.Clone(out[i].Peers)
	}
	return out
}

// insert adds f to fs in time order (after the faults of the same time).
func insert(fs []engine.Fault, f engine.Fault) []engine.Fault {
	i := sort.Search(len(fs), func(i int) bool { return fs[i].AtNS > f.AtNS })
	return slices.Insert(fs, i, f)
}

func indexes(fs []engine.Fault, ok func(engine.Fault) bool) []int {
	var out []int
	for i, f := range fs {
		if ok(f) {
			out = append(out, i)
		}
	}
	return out
}

// DeviceKinds are cfg's write-side device faults with a knob above 0, in table order,
// and whether each knob is aimed at a path.
func DeviceKinds(cfg *engine.Config) ([]engine.FaultKind, func(engine.FaultKind, string) bool) {
	f := &cfg.Faults
	knobs := map[engine.FaultKind]*engine.DiskFault{}
	var out []engine.FaultKind
	for _, k := range []struct {
		kind engine.FaultKind
		knob *engine.DiskFault
	}{{engine.FaultCorrupt, &f.Corrupt}, {engine.FaultMisdirected, &f.MisdirectedWrite}, {engine.FaultLostWrite, &f.LostWrite}, {engine.FaultWriteEIO, &f.WriteEIO}} {
		if k.knob.P > 0 {
			out = append(out, k.kind)
			knobs[k.kind] = k.knob
		}
	}
	return out, func(kind engine.FaultKind, path string) bool { return knobs[kind].Matches("write", []string{path}) }
}
