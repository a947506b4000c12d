// Package crashstate holds the types of systematic crash states (seedfall crashes,
// docs/crashes.md): what the probe looks at and the crash points and states it finds.
// engine makes them and internal/engineapi hands them to seedfall's commands; they live
// here so that they are not part of engine's public API (engine/api_test.go). They are
// generic in the fault and plan types because this package cannot import engine:
// engineapi names them with engine.Fault and *engine.FaultPlan.
package crashstate

// Options choose what the probe looks at. P is *engine.FaultPlan.
type Options[P any] struct {
	// Node is the node whose disk ops are crash points ("": the first server).
	Node string
	// FromOp and ToOp bound the ops (1-based, inclusive; 0: no bound).
	FromOp, ToOp int64
	// MaxStates bounds the distinct states kept per op (0: engine.DefaultMaxStates).
	MaxStates int
	// Plan, when set, is the run's fault plan in place of the seed's own (explore's
	// corpus runs).
	Plan P
	// NoOwnFaults probes the seed's workload with none of its own faults (an empty
	// plan): a seed that fails on its own faults stops the probe at that failure, and
	// without them the crash points cover the whole workload. The states' plans then
	// carry the pinned crash alone. It excludes Plan.
	NoOwnFaults bool
	// PerOp dedupes the states of each op alone. By default a state whose durable image
	// an earlier op of the same incarnation already produced is not kept when, between
	// the two ops, the node sent nothing on the network and no fault of the run's plan
	// applied: the restart finds the same disk and nobody knows more (docs/crashes.md).
	PerOp bool
}

// Point is one disk op of the node and the distinct crash states found before it. F is
// engine.Fault.
type Point[F any] struct {
	Node        string `json:"node"`
	Incarnation int    `json:"incarnation"`
	DiskOp      int64  `json:"disk_op"`
	AtNS        int64  `json:"at_ns"`
	// Before is the seed's own faults applied before the op (its plan's prefix).
	Before []F `json:"before,omitempty"`
	// Where is the op as the trace names it, with its source location.
	Where string `json:"where"`
	// Sent is how many segments the node's machine had put on the network before the
	// op (SYN, SYN-ACK, data, FIN, RST): two ops of one incarnation with the same Sent
	// and the same Before told nobody anything in between (Options.PerOp).
	Sent int64 `json:"sent"`
	// Pending is how many operations were pending on the node's disk.
	Pending int `json:"pending"`
	// Candidates is how many candidate states were tried; Bounded says some were not.
	Candidates int  `json:"candidates"`
	Bounded    bool `json:"bounded,omitempty"`
	// Equivalent counts the distinct images of this op that an earlier op already
	// produced with nothing sent in between (Options.PerOp), so not kept; they count
	// toward MaxStates, so that the states kept are the ones -per-op keeps, less these.
	Equivalent int     `json:"equivalent,omitempty"`
	States     []State `json:"states"`
}

// State is one distinct crash state at a point.
type State struct {
	// Kind names the candidate that first produced the image: "all", "none",
	// "prefix 3/7", "prefix 3/7 + torn #4 at 2/9", "omit #2", "reorder #5 before #3",
	// "subset {1,3}".
	Kind string `json:"kind"`
	// State is the explicit choice list (Fault.CrashState).
	State []int `json:"state"`
	// Image is the durable image hash after the crash.
	Image string `json:"image"`
}
