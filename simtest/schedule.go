package simtest

import (
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// Fault is one fault of a fixed scenario (Schedule): a fault of a plan, with the plan's
// fields and JSON names (docs/faults.md, "Fault plans"), durations as time.Duration.
// TestScheduleFaultMirrorsPlan keeps it in step with the engine's.
type Fault struct {
	At   time.Duration `json:"at_ns"`
	Kind string        `json:"kind"`
	Node string        `json:"node"`
	// MidOp: during the node's first disk op at or after At; DiskOp and Incarnation:
	// during that disk op of that life of the node (1 is the first).
	MidOp       bool  `json:"mid_op,omitempty"`
	DiskOp      int64 `json:"disk_op,omitempty"`
	ReadOp      int64 `json:"read_op,omitempty"`
	Incarnation int   `json:"incarnation,omitempty"`
	// Stream keys the random draws of a crash during a disk op (what of it lands), as a
	// plan's stream_ns: the run the plan came from drew them so.
	Stream       time.Duration `json:"stream_ns,omitempty"`
	RestartAfter time.Duration `json:"restart_after_ns,omitempty"`
	Duration     time.Duration `json:"duration_ns,omitempty"`
	Peers        []string      `json:"peers,omitempty"`
	OneWay       bool          `json:"one_way,omitempty"`
	Latency      time.Duration `json:"latency_ns,omitempty"`
	Jump         time.Duration `json:"jump_ns,omitempty"`
	SkewPPM      int64         `json:"skew_ppm,omitempty"`
	Groups       [][]string    `json:"groups,omitempty"`
	CrashState   []int         `json:"crash_state,omitempty"`
}

// Schedule runs the simulation test test (a Test function of the package that calls
// simtest.Run) with its random faults turned off and faults in their place, at their
// times or disk ops, in every run: a fixed scenario, exact as a plan. It is what
// `seedfall shrink -emit-test` writes from a shrunk plan, a regression test that
// outlives the plan's file and the seedfall version that drew it:
//
//	func TestTornTailSeed14(t *testing.T) {
//		simtest.Schedule(t, TestTornTail,
//			simtest.Fault{At: 427268179 * time.Nanosecond, Kind: "crash", Node: "kv", RestartAfter: 300 * time.Millisecond},
//			simtest.Fault{Kind: "crash", Node: "kv", DiskOp: 56, Incarnation: 2, RestartAfter: 400 * time.Millisecond})
//	}
//
// The faults are the test's own (directed: replay and shrink keep them); the test's other
// settings stay (torn writes, the network's latency, clock skews, strict directories).
// Under plain go test the crashes, kills, restarts, partitions and pauses happen at the
// same offsets of real time, as directed faults do natively; the others are left out.
func Schedule(t *testing.T, test func(*testing.T), faults ...Fault) {
	t.Helper()
	scheduleMu.Lock()
	scheduled = &schedule{t: t, faults: append([]Fault(nil), faults...)}
	scheduleMu.Unlock()
	defer func() {
		scheduleMu.Lock()
		scheduled = nil
		scheduleMu.Unlock()
	}()
	test(t)
}

// scheduled is the schedule of the test that Schedule runs (no map: a map would draw
// from the runtime's random stream, which the workload's math/rand shares).
var (
	scheduleMu sync.Mutex
	scheduled  *schedule
)

type schedule struct {
	t      *testing.T
	faults []Fault
}

// scheduleOf is the schedule of t's run, or nil.
func scheduleOf(t *testing.T) *schedule {
	scheduleMu.Lock()
	defer scheduleMu.Unlock()
	if scheduled == nil || scheduled.t != t {
		return nil
	}
	return scheduled
}

// useSchedule turns off d's random faults, keeping the rest of its world, and gives it
// the schedule.
func (d *decl) useSchedule(s *schedule) {
	var f Faults
	if d.faults != nil {
		if err := json.Unmarshal(d.faults, &f); err != nil {
			d.errorf("faults: %v", err)
			return
		}
	}
	f.CrashPerSec, f.KillPerSec, f.PartitionPerSec, f.SplitPerSec = 0, 0, 0, 0
	f.LatencySpikePerSec, f.ResetPerSec, f.PausePerSec, f.ClockJumpPerSec = 0, 0, 0, 0
	f.CrashMidOp, f.Swarm = nil, false
	for _, p := range []*DiskFault{&f.FsyncEIO, &f.ReadEIO, &f.Corrupt, &f.CorruptRead, &f.MisdirectedWrite, &f.LostWrite, &f.WriteEIO, &f.SlowIO} {
		*p = DiskFault{}
	}
	faults, err := json.Marshal(f)
	if err != nil {
		d.errorf("faults: %v", err)
		return
	}
	sched, err := json.Marshal(s.faults)
	if err != nil {
		d.errorf("schedule: %v", err)
		return
	}
	d.faults, d.schedule, d.nativeSteps = faults, sched, s.faults
}

// runNativeSchedule does natively what the schedule's faults can: each crash, kill,
// restart, partition and pause at its offset of real time from the workload's start,
// until done is closed (the workload returned).
func runNativeSchedule(t *T, faults []Fault, done <-chan struct{}) {
	type step struct {
		at   time.Duration
		kind string
		node string
		peer string
		d    time.Duration
	}
	var steps []step
	for _, f := range faults {
		if f.DiskOp > 0 || f.ReadOp > 0 {
			t.native.Logf("simtest: natively, %s of %s at its disk op #%d is left out", f.Kind, f.Node, f.DiskOp+f.ReadOp)
			continue
		}
		switch f.Kind {
		case "crash", "kill":
			steps = append(steps, step{at: f.At, kind: f.Kind, node: f.Node})
			if f.RestartAfter > 0 {
				steps = append(steps, step{at: f.At + f.RestartAfter, kind: "restart", node: f.Node})
			}
		case "restart":
			steps = append(steps, step{at: f.At, kind: f.Kind, node: f.Node})
		case "pause":
			steps = append(steps, step{at: f.At, kind: f.Kind, node: f.Node, d: f.Duration})
		case "partition":
			for _, p := range f.Peers {
				steps = append(steps, step{at: f.At, kind: "partition", node: f.Node, peer: p},
					step{at: f.At + f.Duration, kind: "heal", node: f.Node, peer: p})
			}
		default:
			t.native.Logf("simtest: natively, %s of %s is left out", f.Kind, f.Node)
		}
	}
	sortSteps := func(i, j int) bool { return steps[i].at < steps[j].at }
	for i := 1; i < len(steps); i++ { // insertion sort: stable, few steps
		for j := i; j > 0 && sortSteps(j, j-1); j-- {
			steps[j], steps[j-1] = steps[j-1], steps[j]
		}
	}
	start := time.Now()
	for _, s := range steps {
		if d := s.at - time.Since(start); d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-done:
				timer.Stop()
				return
			}
		}
		select {
		case <-done:
			return
		default:
		}
		if err := t.net.directed(t.native, s.kind, s.node, s.peer, s.d); err != nil {
			t.native.Errorf("simtest: schedule: %s %s: %v", s.kind, s.node, err)
			return
		}
	}
}
