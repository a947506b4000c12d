package engine

import (
	"encoding/json"
	"fmt"
	"strings"
)

// FaultKind names a kind of fault.
type FaultKind string

// Fault kinds. A fault plan is data: a list of Faults, generated from the seed and the
// config's rates or read from a file, and replayed exactly.
const (
	FaultCrash     FaultKind = "crash"      // kill the node (idle, or during disk op DiskOp); restart after RestartNS (0: never)
	FaultPartition FaultKind = "partition"  // cut links between Node and Peers (both ways unless OneWay) for DurationNS
	FaultLatency   FaultKind = "latency"    // add LatencyNS to every link of Node for DurationNS
	FaultReset     FaultKind = "reset"      // reset every open connection of Node
	FaultPause     FaultKind = "pause"      // do not schedule Node for DurationNS (GC stall, SIGSTOP)
	FaultClockJump FaultKind = "clock_jump" // jump Node's wall clock by JumpNS (may be negative); monotonic clock unaffected
	FaultClockSkew FaultKind = "clock_skew" // Node's clocks run at rate (1 + SkewPPM/1e6)
	FaultFsyncEIO  FaultKind = "fsync_eio"  // Node's next fsync (or disk op DiskOp if it is an fsync) fails with EIO
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
	// ArmedNS is when a mid-op crash was armed (it fires at the next disk op after it).
	ArmedNS     int64 `json:"armed_ns,omitempty"`
	DiskOp      int64 `json:"disk_op,omitempty"`
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
	// Where is filled in when the fault fired during a disk op: the op and the guest's
	// source location, e.g. "write server/log.go:88".
	Where string `json:"where,omitempty"`
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
	// Provenance records the build the plan was saved from; replay warns when it differs.
	Provenance *Provenance `json:"provenance,omitempty"`
}

// String renders a fault on one line, as in seedfall's output:
// "427.268ms crash server during disk op #56, restart at 1.942589s".
func (f Fault) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", FormatDuration(f.AtNS), f.Kind, f.Node)
	switch f.Kind {
	case FaultCrash:
		if f.DiskOp > 0 {
			fmt.Fprintf(&b, " during disk op #%d", f.DiskOp)
			if f.Where != "" {
				fmt.Fprintf(&b, " (%s)", f.Where)
			}
		}
		if f.RestartNS > 0 {
			fmt.Fprintf(&b, ", restart at %s", FormatDuration(f.AtNS+f.RestartNS))
		}
	case FaultPartition:
		dir := "<->"
		if f.OneWay {
			dir = "->"
		}
		fmt.Fprintf(&b, " %s %s for %s", dir, strings.Join(f.Peers, ","), FormatDuration(f.DurationNS))
	case FaultLatency:
		fmt.Fprintf(&b, " +%s for %s", FormatDuration(f.LatencyNS), FormatDuration(f.DurationNS))
	case FaultPause:
		fmt.Fprintf(&b, " for %s", FormatDuration(f.DurationNS))
	case FaultClockJump:
		fmt.Fprintf(&b, " by %s", FormatDuration(f.JumpNS))
	case FaultClockSkew:
		fmt.Fprintf(&b, " %+dppm", f.SkewPPM)
	case FaultFsyncEIO:
		if f.DiskOp > 0 {
			fmt.Fprintf(&b, " at disk op #%d", f.DiskOp)
		}
	}
	return b.String()
}

// Validate checks a fault read from a plan file.
func (f Fault) Validate() error {
	switch f.Kind {
	case FaultCrash, FaultPartition, FaultLatency, FaultReset, FaultPause, FaultClockJump, FaultClockSkew, FaultFsyncEIO:
	default:
		return fmt.Errorf("kind %q is not a fault kind (want crash, partition, latency, reset, pause, clock_jump, clock_skew or fsync_eio)", f.Kind)
	}
	if f.Node == "" {
		return fmt.Errorf("node is required")
	}
	if f.AtNS < 0 || f.DiskOp < 0 || f.RestartNS < 0 || f.DurationNS < 0 {
		return fmt.Errorf("at_ns, disk_op, restart_after_ns and duration_ns must not be negative")
	}
	if f.Kind == FaultClockSkew && f.SkewPPM <= -1_000_000 {
		return fmt.Errorf("skew_ppm %d: a clock must run forward (want more than -1000000)", f.SkewPPM)
	}
	if f.Kind == FaultPartition && len(f.Peers) == 0 {
		return fmt.Errorf("a partition needs peers")
	}
	return nil
}
