package engine

import (
	"fmt"

	"github.com/seedfall/seedfall/engine/internal/disk"
	"strings"
	"time"
)

// kindSpec is everything the engine knows about one fault kind, in one place. A new kind
// is one entry of faultKinds, plus its generator (generatePlan) and its knob (the
// "faults" section of the config, named in the entry's knob field so that swarm testing
// draws it); CONTRIBUTING.md walks through it.
type kindSpec struct {
	kind FaultKind
	// pinned: a fault of this kind may be pinned to a disk op of an incarnation
	// (disk_op, incarnation) instead of a time; it is then armed on that incarnation
	// (arm) and fires from the disk-op path, not from apply.
	pinned bool
	// arm arms a pinned fault on the incarnation it names (pinned kinds only).
	arm func(inc *incarnation, f Fault)
	// apply fires a fault at its time (f.AtNS is the current time). It records the fault
	// in w.applied when it takes effect, and traces it.
	apply func(w *world, n *node, f Fault)
	// detail writes the kind's own part of Fault.String, after "AT KIND NODE".
	detail func(b *strings.Builder, f Fault)
	// brief writes the kind's part of the brief form of Fault.text, after "KIND",
	// including the subject (nil: " NODE"). See faultBrief.
	brief func(b *strings.Builder, f Fault)
	// check validates the kind's own fields of a fault read from a plan (nil: none).
	check func(f Fault) error
	// span is how long the fault's effect lasts: a duration (> 0), an instant (0), or
	// until the node's next fault of the kind or the end of the run (< 0).
	span func(f Fault) int64
	// restarts reports whether the fault ends the node's life and starts another, which
	// shifts the incarnation of every later fault pinned to that node's disk ops.
	restarts func(f Fault) bool
	// simplify proposes simpler variants of the fault for shrink, simplest first (nil:
	// none).
	simplify func(f Fault) []Fault
	// class is the fault's class, for FaultClasses and the report's colours (nil: the
	// kind's name). The report's stylesheet has a colour per class (.k-CLASS).
	class func(f Fault) string
	// knob is the JSON name of the kind's rate or probability in the config's faults
	// section ("crash_per_sec", "fsync_eio"): swarm testing draws it per seed (swarm.go).
	// Empty: the kind is not drawn by rate, and swarm leaves it alone.
	knob string
}

// faultKinds is every fault kind, in the order the docs and messages list them. It is
// set in init because the entries' functions reach back to the lookups (specOf).
var faultKinds []*kindSpec

func init() { faultKinds = kindTable() }

func kindTable() []*kindSpec {
	return []*kindSpec{
		{
			kind:   FaultCrash,
			knob:   "crash_per_sec",
			pinned: true,
			arm:    func(inc *incarnation, f Fault) { inc.crashAt = f.DiskOp },
			apply: func(w *world, n *node, f Fault) {
				if f.Directed && !f.MidOp && f.RestartNS == 0 {
					n.heldDown = true // a mid-op one when it fires (diskop.go)
				}
				if n.inc == nil || n.inc.state == incDone {
					if f.Directed {
						w.tracef("fault", "crash %s: it is down%s", n.name, directedNote)
					}
					return // already down: nothing to crash
				}
				if f.MidOp {
					// Crash during the node's next disk op; if it does none before it would
					// restart anyway, the fault simply does not fire.
					n.crashNextOp = true
					n.crashSkip = f.SkipOps
					n.midPlanned = &f
					return
				}
				f.Build = w.restartBuild(n, f)
				w.applied = append(w.applied, f)
				inc := n.inc
				w.tracef("fault", "crash %s (idle)%s", inc.label, noteOf(f))
				w.kill(inc, deathPower)
				var rng disk.Chooser = w.crashRand(n.name, f.AtNS)
				if len(f.CrashState) > 0 {
					rng = newStateChooser(f.CrashState)
				}
				w.crashed(n, f, rng)
			},
			brief: func(b *strings.Builder, f Fault) {
				fmt.Fprintf(b, " %s", f.Node)
				if f.DiskOp > 0 {
					fmt.Fprintf(b, " during disk op #%d", f.DiskOp)
				}
			},
			detail: func(b *strings.Builder, f Fault) {
				if f.DiskOp > 0 {
					fmt.Fprintf(b, " during disk op #%d", f.DiskOp)
					if f.Where != "" {
						fmt.Fprintf(b, " (%s)", f.Where)
					}
				}
				if len(f.CrashState) > 0 {
					fmt.Fprintf(b, " state %s", formatState(f.CrashState))
				}
				if f.RestartNS > 0 {
					fmt.Fprintf(b, ", restart at %s", formatDuration(f.AtNS+f.RestartNS))
					if f.Build != "" {
						fmt.Fprintf(b, " on the %s build", f.Build)
					}
				}
			},
			span: func(f Fault) int64 {
				if f.RestartNS > 0 {
					return f.RestartNS
				}
				return -1 // down until something restarts it
			},
			restarts: func(f Fault) bool { return f.RestartNS > 0 },
			check: func(f Fault) error {
				if f.SkipOps > 0 && !f.MidOp && f.DiskOp <= 0 {
					return fmt.Errorf("skip_ops is for a crash during a disk op (mid_op, or disk_op as a fired one records it)")
				}
				if len(f.CrashState) == 0 {
					return nil
				}
				if f.MidOp {
					return fmt.Errorf("crash_state is for a crash pinned to a disk op (disk_op) or an idle crash, not a mid_op one")
				}
				if f.DiskOp <= 0 && f.CrashState[0] != 0 {
					return fmt.Errorf("crash_state[0] is %d: an idle crash has no op in flight (want 0)", f.CrashState[0])
				}
				for i, v := range f.CrashState {
					if v < 0 {
						return fmt.Errorf("crash_state[%d] is %d: choices are 0 or more", i, v)
					}
				}
				return nil
			},
			simplify: func(f Fault) []Fault {
				var out []Fault
				if f.DiskOp > 0 {
					g := f // an idle crash instead of one during a disk op
					g.DiskOp, g.Incarnation, g.Where, g.MidOp, g.ArmedNS, g.StreamNS = 0, 0, "", false, 0, 0
					g.CrashState, g.SkipOps = nil, 0
					out = append(out, g)
				}
				if f.Build == BuildNew {
					// An upgrade the failure does not need: restart on the old build.
					g := f
					g.Build = BuildOld
					out = append(out, g)
				}
				return out
			},
			class: func(f Fault) string {
				if f.DiskOp > 0 || f.MidOp {
					return "crash-mid-op"
				}
				return "crash"
			},
		},
		{
			kind: FaultKill,
			knob: "kill_per_sec",
			apply: func(w *world, n *node, f Fault) {
				if f.Directed && f.RestartNS == 0 {
					n.heldDown = true
				}
				if n.inc == nil || n.inc.state == incDone {
					if f.Directed {
						w.tracef("fault", "kill %s: it is down%s", n.name, directedNote)
					}
					return // already down: nothing to kill
				}
				w.applied = append(w.applied, f)
				inc := n.inc
				w.tracef("fault", "kill %s (process death: the page cache survives, the kernel closes its sockets)%s", inc.label, noteOf(f))
				w.kill(inc, deathProcess)
				if f.RestartNS > 0 {
					w.schedule(w.now+f.RestartNS, func() {
						if n.inc == nil && !w.done && !n.heldDown {
							w.start(n)
						}
					})
				}
			},
			detail: func(b *strings.Builder, f Fault) {
				if f.RestartNS > 0 {
					fmt.Fprintf(b, ", restart at %s", formatDuration(f.AtNS+f.RestartNS))
				}
			},
			check: func(f Fault) error {
				if f.DiskOp > 0 || f.MidOp {
					return fmt.Errorf("a kill happens between system calls: disk_op and mid_op are for a crash")
				}
				return nil
			},
			span: func(f Fault) int64 {
				if f.RestartNS > 0 {
					return f.RestartNS
				}
				return -1 // down until something restarts it
			},
			restarts: func(f Fault) bool { return f.RestartNS > 0 },
		},
		{
			kind: FaultPartition,
			knob: "partition_per_sec",
			apply: func(w *world, n *node, f Fault) {
				w.applied = append(w.applied, f)
				w.tracef("fault", "%s", f.text(faultUntimed))
				w.partition(f)
			},
			detail: partitionDetail,
			check: func(f Fault) error {
				if len(f.Peers) == 0 {
					return fmt.Errorf("a partition needs peers")
				}
				return nil
			},
			span:     lastsDuration,
			simplify: halveDuration,
		},
		{
			kind: FaultSplit,
			knob: "split_per_sec",
			apply: func(w *world, n *node, f Fault) {
				w.applied = append(w.applied, f)
				w.tracef("fault", "split %s for %s", f.groupsText(), formatDuration(f.DurationNS))
				w.split(f)
			},
			brief: func(b *strings.Builder, f Fault) {
				// "split n1,n2 | n3,n4,n5": the groups name the node.
				b.WriteString(" " + f.groupsText())
			},
			detail: func(b *strings.Builder, f Fault) {
				// "1.2s split n1 into n1,n2 | n3,n4,n5 for 800ms": the node is the first of the
				// first group, so the line names every side.
				fmt.Fprintf(b, " into %s for %s", f.groupsText(), formatDuration(f.DurationNS))
			},
			check: func(f Fault) error { return f.validateGroups() },
			span:  lastsDuration,
			simplify: func(f Fault) []Fault {
				// A split into three groups first becomes two (the last two merged), then it
				// shortens like any partition.
				var out []Fault
				if len(f.Groups) > 2 {
					g := f
					g.Groups = append(append([][]string(nil), f.Groups[:len(f.Groups)-2]...),
						append(append([]string(nil), f.Groups[len(f.Groups)-2]...), f.Groups[len(f.Groups)-1]...))
					out = append(out, g)
				}
				return append(out, halveDuration(f)...)
			},
		},
		{
			kind: FaultLatency,
			knob: "latency_spike_per_sec",
			apply: func(w *world, n *node, f Fault) {
				w.applied = append(w.applied, f)
				w.tracef("fault", "%s", f.text(faultUntimed))
				w.addLatency(f)
			},
			detail: func(b *strings.Builder, f Fault) {
				fmt.Fprintf(b, " +%s for %s", formatDuration(f.LatencyNS), formatDuration(f.DurationNS))
			},
			span:     lastsDuration,
			simplify: halveDuration,
		},
		{
			kind: FaultReset,
			knob: "reset_per_sec",
			apply: func(w *world, n *node, f Fault) {
				if n.inc == nil {
					return
				}
				w.applied = append(w.applied, f)
				w.tracef("fault", "reset connections of %s", n.inc.label)
				w.net.ResetAll(n.inc.host.Sockets())
			},
		},
		{
			kind: FaultPause,
			knob: "pause_per_sec",
			apply: func(w *world, n *node, f Fault) {
				if n.inc == nil {
					return
				}
				w.applied = append(w.applied, f)
				// Overlapping pauses extend each other; the node resumes when the last ends.
				end := w.now + f.DurationNS
				n.pausedTo = max(n.pausedTo, end)
				w.tracef("fault", "pause %s for %s%s", n.inc.label, formatDuration(f.DurationNS), noteOf(f))
				w.schedule(end, func() {
					if n.pausedTo <= w.now {
						w.tracef("fault", "resume %s", n.name)
					}
				})
			},
			detail: func(b *strings.Builder, f Fault) {
				fmt.Fprintf(b, " for %s", formatDuration(f.DurationNS))
			},
			span:     lastsDuration,
			simplify: halveDuration,
		},
		{
			kind: FaultClockJump,
			knob: "clock_jump_per_sec",
			apply: func(w *world, n *node, f Fault) {
				w.applied = append(w.applied, f)
				n.wallJump += f.JumpNS
				w.tracef("fault", "wall clock of %s jumps by %s", n.name, formatDuration(f.JumpNS))
			},
			detail: func(b *strings.Builder, f Fault) {
				fmt.Fprintf(b, " by %s", formatDuration(f.JumpNS))
			},
		},
		{
			kind: FaultClockSkew,
			knob: "clock_skew_ppm",
			apply: func(w *world, n *node, f Fault) {
				w.applied = append(w.applied, f)
				n.setSkew(w.now, f.SkewPPM)
				w.tracef("fault", "clock of %s drifts %+dppm", n.name, f.SkewPPM)
			},
			detail: func(b *strings.Builder, f Fault) {
				fmt.Fprintf(b, " %+dppm", f.SkewPPM)
			},
			check: func(f Fault) error {
				if f.SkewPPM <= -1_000_000 {
					return fmt.Errorf("skew_ppm %d: a clock must run forward (want more than -1000000)", f.SkewPPM)
				}
				return nil
			},
			span: func(Fault) int64 { return -1 }, // until the node's next skew
		},
		{
			kind:   FaultFsyncEIO,
			knob:   "fsync_eio",
			pinned: true,
			arm: func(inc *incarnation, f Fault) {
				if inc.eioAt == nil {
					inc.eioAt = map[int64]bool{}
				}
				inc.eioAt[f.DiskOp] = true
			},
			apply: func(w *world, n *node, f Fault) {
				if n.inc == nil {
					return
				}
				// Time-based: the next fsync fails. It is recorded (and traced) when it does.
				n.inc.failNextSync = true
				n.inc.eioFault = &f
			},
			detail: func(b *strings.Builder, f Fault) {
				if f.DiskOp > 0 {
					fmt.Fprintf(b, " at disk op #%d", f.DiskOp)
				}
			},
		},
		deviceKind(FaultReadEIO, "disk-error"),
		deviceKind(FaultCorrupt, "corruption"),
		deviceKind(FaultCorruptRead, "corruption"),
		deviceKind(FaultMisdirected, "corruption"),
		deviceKind(FaultLostWrite, "lost-write"),
		deviceKind(FaultWriteEIO, "disk-error"),
		deviceKind(FaultSlowIO, "slow-io"),
		restartKind(),
		healKind(),
	}
}

func partitionDetail(b *strings.Builder, f Fault) {
	dir := "<->"
	if f.OneWay {
		dir = "->"
	}
	if f.Directed && f.DurationNS == 0 {
		fmt.Fprintf(b, " %s %s until healed", dir, strings.Join(f.Peers, ","))
		return
	}
	fmt.Fprintf(b, " %s %s for %s", dir, strings.Join(f.Peers, ","), formatDuration(f.DurationNS))
}

func lastsDuration(f Fault) int64 { return f.DurationNS }

// halveDuration proposes the fault at half its duration, down to a millisecond.
func halveDuration(f Fault) []Fault {
	if f.DurationNS <= int64(time.Millisecond) {
		return nil
	}
	g := f
	g.DurationNS = f.DurationNS / 2
	return []Fault{g}
}

// specOf returns the kind's entry, or nil for a kind the engine does not know.
func specOf(k FaultKind) *kindSpec {
	for _, s := range faultKinds {
		if s.kind == k {
			return s
		}
	}
	return nil
}

// isPinned reports whether f is pinned to a disk op (rather than to a time).
func (f Fault) isPinned() bool {
	s := specOf(f.Kind)
	return (f.DiskOp > 0 || f.ReadOp > 0) && s != nil && s.pinned
}

// armPinned arms the pinned faults of n's plan that name incarnation inc.
func armPinned(inc *incarnation, armed []Fault) {
	for _, f := range armed {
		if f.Incarnation == inc.n {
			specOf(f.Kind).arm(inc, f)
		}
	}
}

// Span is how long the fault's effect lasts, in nanoseconds: a duration (the restart
// delay of a crash, the length of a partition, pause or latency spike), 0 for an
// instant (a reset, a clock jump, an fsync error), or -1 for a state that holds until
// the node's next fault of the same kind (a crash without restart, a clock skew) or the
// end of the run.
func (f Fault) Span() int64 {
	if s := specOf(f.Kind); s != nil && s.span != nil {
		return s.span(f)
	}
	return 0
}

// Class is the fault's class: its kind, "crash-mid-op" for a crash during a disk op, or
// "other" for a kind the engine does not know.
func (f Fault) Class() string {
	s := specOf(f.Kind)
	switch {
	case s == nil:
		return "other"
	case s.class != nil:
		return s.class(f)
	}
	return string(f.Kind)
}

// kindList is the kinds for messages: "crash, partition, ... or fsync_eio".
func kindList() string {
	var names []string
	for _, s := range faultKinds {
		names = append(names, string(s.kind))
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
