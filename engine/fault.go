package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// FaultKind names a kind of fault.
type FaultKind string

// Fault kinds (faultkind.go holds what the engine knows of each). A fault plan is data:
// a list of Faults, generated from the seed and the config's rates or read from a file,
// and replayed exactly.
const (
	FaultCrash FaultKind = "crash" // power loss of the node (idle, or during disk op DiskOp); restart after RestartNS (0: never)
	// FaultKill is a process death on a live machine (OOM killer, SIGKILL): the page
	// cache survives (nothing unsynced is lost) and the kernel closes the node's sockets
	// (FIN, or RST where received data was unread). Always idle: a process dies between
	// system calls. Restart after RestartNS (0: never), like a crash.
	FaultKill      FaultKind = "kill"
	FaultPartition FaultKind = "partition" // cut links between Node and Peers (both ways unless OneWay) for DurationNS
	// FaultSplit is a group partition: the nodes fall into Groups (two or more), every
	// link between two groups is cut both ways for DurationNS, and links inside a group
	// stay. Node is the first node of the first group (the smallest), for the trace.
	FaultSplit     FaultKind = "split"
	FaultLatency   FaultKind = "latency"    // add LatencyNS to every link of Node for DurationNS
	FaultReset     FaultKind = "reset"      // reset every open connection of Node
	FaultPause     FaultKind = "pause"      // do not schedule Node for DurationNS (GC stall, SIGSTOP)
	FaultClockJump FaultKind = "clock_jump" // jump Node's wall clock by JumpNS (may be negative); monotonic clock unaffected
	FaultClockSkew FaultKind = "clock_skew" // Node's clocks run at rate (1 + SkewPPM/1e6)
	FaultFsyncEIO  FaultKind = "fsync_eio"  // Node's next fsync (or disk op DiskOp if it is an fsync) fails with EIO
	// The device faults (docs/faults.md, "Device faults"). Each fires in the node's next
	// matching call after AtNS, or in the incarnation's disk op DiskOp (the write kinds
	// and slow_io) or file read ReadOp (the read kinds); where in the file it strikes is
	// drawn from the fault's own stream, so a plan replays it exactly.
	FaultReadEIO     FaultKind = "read_eio"          // a sector range of the read becomes unreadable (EIO) until rewritten
	FaultCorrupt     FaultKind = "corrupt"           // a sector the write touches is corrupted on the device at the next crash
	FaultCorruptRead FaultKind = "corrupt_read"      // the read returns wrong bytes in one sector; the disk is unchanged
	FaultMisdirected FaultKind = "misdirected_write" // the write lands at another sector-aligned offset of the file
	FaultLostWrite   FaultKind = "lost_write"        // the write is acknowledged, never stored: gone after the next crash
	FaultWriteEIO    FaultKind = "write_eio"         // the write fails with EIO and writes nothing
	FaultSlowIO      FaultKind = "slow_io"           // the write or fsync takes LatencyNS more virtual time
	// FaultRestart starts a node that is down (after a crash or a kill that did not
	// restart it); a node that is up is left alone. FaultHeal heals a partition that
	// lasts until healed (duration_ns 0): Node's links to Peers. Neither is drawn by a
	// rate: the workload asks for them (directed faults, directed.go), or a plan states
	// them.
	FaultRestart FaultKind = "restart"
	FaultHeal    FaultKind = "heal"
)

// Fault is one planned fault. A fault fires at virtual time AtNS, or, when DiskOp > 0,
// during the node's DiskOp-th disk operation of incarnation Incarnation (whichever the plan says).
type Fault struct {
	AtNS int64     `json:"at_ns"`
	Kind FaultKind `json:"kind"`
	Node string    `json:"node"`
	// MidOp asks for the crash to happen during the node's first disk op at or after AtNS.
	// When it fires, DiskOp and Incarnation record where, so the plan replays exactly.
	MidOp bool `json:"mid_op,omitempty"`
	// SkipOps, for a mid-op crash, is how many of the node's matching disk ops after
	// AtNS it lets pass before it fires in the next one (faults.crash_placement
	// "spread" draws it; 0: the first op after AtNS). A fired crash, pinned to its
	// DiskOp, keeps it with ArmedNS: it only says so in the trace.
	SkipOps int64 `json:"skip_ops,omitempty"`
	// ArmedNS is when a mid-op crash was armed in this run (it fires at the next disk op
	// after it); it also keys the crash's random stream (how much of the op lands, what
	// the disk keeps), unless StreamNS is set.
	ArmedNS int64 `json:"armed_ns,omitempty"`
	// StreamNS keys the crash's random stream in place of ArmedNS: a shrunk plan moves
	// the arming time of the run that first drew the crash here, so that the crash tears
	// the same way while the plan states no arming time that its own run does not have.
	StreamNS int64 `json:"stream_ns,omitempty"`
	DiskOp   int64 `json:"disk_op,omitempty"`
	// ReadOp pins a read-side device fault (read_eio, corrupt_read) to the incarnation's
	// ReadOp-th read of a file (reads are not disk ops: they are counted apart).
	ReadOp      int64 `json:"read_op,omitempty"`
	Incarnation int   `json:"incarnation,omitempty"`
	// RestartNS is how long after the crash the node restarts (a delay, not a time;
	// 0: never). Plans name it restart_after_ns; restart_ns, its old name, is read too.
	RestartNS  int64    `json:"restart_after_ns,omitempty"`
	DurationNS int64    `json:"duration_ns,omitempty"`
	Peers      []string `json:"peers,omitempty"`
	OneWay     bool     `json:"one_way,omitempty"`
	LatencyNS  int64    `json:"latency_ns,omitempty"`
	JumpNS     int64    `json:"jump_ns,omitempty"`
	SkewPPM    int64    `json:"skew_ppm,omitempty"`
	// Groups are the sides of a split (FaultSplit), each a list of node names.
	Groups [][]string `json:"groups,omitempty"`
	// Where is filled in when the fault fired during a disk op: the op and the guest's
	// source location, e.g. "write server/log.go:88".
	Where string `json:"where,omitempty"`
	// Build is, for a crash of a node with an upgrade, the build its restart runs:
	// "old" or "new" (upgrade.go). Empty: the node's upgrade mode decides.
	Build string `json:"build,omitempty"`
	// CrashState, for a crash pinned to a disk op, is an explicit crash state in place of
	// random draws (docs/crashes.md). The first number is the op in flight's: 0, nothing
	// of it lands; i > 0, a write lands up to its i-th tear point, a namespace op or an
	// fsync lands. Each further number is one choice of the crash, in the order the disk
	// makes them: per directory how many pending namespace ops persist, per pending
	// truncate 0 kept / 1 lost, per pending write 0 kept / 1 lost / 2 torn, and for a
	// torn write which tear point. seedfall crashes writes it; a plan that states it
	// replays that crash state exactly.
	CrashState []int `json:"crash_state,omitempty"`
	// Directed marks a fault the workload asked for (sim.Crash, simtest's T.Crash, ...:
	// directed.go). A run's plan records it as it fired; a replay of the plan does not
	// apply it (the workload asks again, at the same moment), and shrink never drops it.
	Directed bool `json:"directed,omitempty"`
}

// UnmarshalJSON reads a fault, taking restart_ns (the old name of restart_after_ns) in
// plans saved before the rename; giving both with different values is an error.
func (f *Fault) UnmarshalJSON(data []byte) error {
	type plain Fault
	aux := struct {
		*plain
		OldRestartNS *int64 `json:"restart_ns"`
	}{plain: (*plain)(f)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if o := aux.OldRestartNS; o != nil {
		if f.RestartNS != 0 && f.RestartNS != *o {
			return fmt.Errorf("restart_ns %d and restart_after_ns %d disagree: give restart_after_ns only (restart_ns is its old name)", *o, f.RestartNS)
		}
		f.RestartNS = *o
	}
	return nil
}

// FaultPlan is a replayable list of faults, ordered by time.
type FaultPlan struct {
	Seed   uint64  `json:"seed,omitempty"`
	Faults []Fault `json:"faults"`
	// Swarm is the swarm draw the plan's run had (swarm.go): a replay runs under it, so
	// its rates and probabilities are those of the original run.
	Swarm SwarmDraw `json:"swarm,omitempty"`
	// Provenance records the build the plan was saved from; replay warns when it differs.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// String renders a fault on one line, as in seedfall's output:
// "427.268ms crash server during disk op #56, restart at 1.942589s".
func (f Fault) String() string { return f.text(faultFull) }

// faultVariant picks one of the forms of a fault's text. Every fault text in the engine,
// the CLI and the report comes from Fault.text, so a kind's wording lives in one place,
// its entry's detail (and, for the brief form, its brief).
type faultVariant int

const (
	// faultFull is "AT KIND NODE<detail>": Fault.String, the plan and summary lines, the
	// report's timeline and failure lists.
	faultFull faultVariant = iota
	// faultBrief is "KIND NODE<brief>" (or "KIND<brief>" when the kind's brief names its
	// own subject, as a split names its groups): no time and only what picks the fault
	// out among its neighbours. It names a fault inside another line: the cause's
	// moments and the "dropped: quiet period" trace line. Trace lines are hashed, so
	// this form must not change.
	faultBrief
	// faultUntimed is faultFull without its time: "KIND NODE<detail>", the trace line of
	// a fault that fires as planned (the trace line has its own time). Hashed too.
	faultUntimed
)

// text is the one builder of a fault's text, in the form v.
func (f Fault) text(v faultVariant) string {
	var b strings.Builder
	s := specOf(f.Kind)
	switch v {
	case faultBrief:
		b.WriteString(string(f.Kind))
		if s != nil && s.brief != nil {
			s.brief(&b, f)
		} else {
			b.WriteString(" " + f.Node)
		}
	default:
		if v == faultFull {
			fmt.Fprintf(&b, "%s ", formatDuration(f.AtNS))
		}
		fmt.Fprintf(&b, "%s %s", f.Kind, f.Node)
		if s != nil && s.detail != nil {
			s.detail(&b, f)
		}
		if f.Directed {
			b.WriteString(directedNote)
		}
	}
	return b.String()
}

// Validate checks a fault read from a plan file.
func (f Fault) Validate() error {
	spec := specOf(f.Kind)
	if spec == nil {
		return fmt.Errorf("kind %q is not a fault kind (want %s)", f.Kind, kindList())
	}
	if f.Node == "" {
		return fmt.Errorf("node is required")
	}
	if f.AtNS < 0 || f.DiskOp < 0 || f.RestartNS < 0 || f.DurationNS < 0 || f.ReadOp < 0 || f.SkipOps < 0 {
		return fmt.Errorf("at_ns, disk_op, read_op, skip_ops, restart_after_ns and duration_ns must not be negative")
	}
	if f.ReadOp > 0 && !readKind(f.Kind) {
		return fmt.Errorf("read_op pins a read fault (read_eio or corrupt_read), not a %s: use disk_op", f.Kind)
	}
	if f.DiskOp > 0 && readKind(f.Kind) {
		return fmt.Errorf("a %s strikes a read, which is not a disk op: use read_op", f.Kind)
	}
	if len(f.Groups) > 0 && f.Kind != FaultSplit {
		return fmt.Errorf("groups are for a split, not a %s", f.Kind)
	}
	if spec.check != nil {
		return spec.check(f)
	}
	return nil
}

// validateGroups checks a split's groups: at least two, none empty, no node twice, and
// the fault's node in the first group.
func (f Fault) validateGroups() error {
	if len(f.Groups) < 2 {
		return fmt.Errorf("a split needs at least two groups, got %d", len(f.Groups))
	}
	seen := map[string]bool{}
	for i, g := range f.Groups {
		if len(g) == 0 {
			return fmt.Errorf("groups[%d] is empty", i)
		}
		for _, n := range g {
			if n == "" {
				return fmt.Errorf("groups[%d] has an empty node name", i)
			}
			if seen[n] {
				return fmt.Errorf("node %q is in two groups", n)
			}
			seen[n] = true
		}
	}
	if !slices.Contains(f.Groups[0], f.Node) {
		return fmt.Errorf("node %q is not in groups[0] (a split names the first node of its first group)", f.Node)
	}
	return nil
}

// groupsText renders a split's groups as "n1,n2 | n3,n4,n5".
func (f Fault) groupsText() string {
	parts := make([]string, len(f.Groups))
	for i, g := range f.Groups {
		parts[i] = strings.Join(g, ",")
	}
	return strings.Join(parts, " | ")
}
