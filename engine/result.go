package engine

import (
	"fmt"
	"time"

	"github.com/seedfall/seedfall/engine/coverage"
)

// Verdict is the outcome of one run.
type Verdict string

// Verdicts. A found bug is a Result with VerdictFail, not an error.
const (
	VerdictPass     Verdict = "pass"     // the workload exited 0 and no check failed
	VerdictFail     Verdict = "fail"     // a check failed: see Result.Failure
	VerdictHorizon  Verdict = "horizon"  // the run reached the time horizon under "liveness": {"horizon": "count"}; counted, not failed
	VerdictWatchdog Verdict = "watchdog" // the run exceeded its wall-clock budget (a guest spinning without host calls)
	VerdictError    Verdict = "error"    // the tool could not complete the run (see Result.Error)
)

// Failure says what broke in a failing run.
type Failure struct {
	// Reason is the human-readable failure, e.g.
	// "client#1: acknowledged write lost: k22=v262, server now answers NONE".
	Reason string `json:"reason"`
	// Node is the node incarnation that reported or caused it ("client#1"), if any.
	Node string `json:"node,omitempty"`
	// Kind classifies the failure (the Kind constants).
	Kind FailureKind `json:"kind"`
	// AtNS is the virtual time of the failure.
	AtNS int64 `json:"at_ns"`
	// Signature groups failures that are the same bug (see Signature).
	Signature string `json:"signature"`
	// Visualization is the path of Porcupine's HTML visualization, for linearizability failures.
	Visualization string `json:"visualization,omitempty"`
	// LastOutput is, for a liveness failure, the workload's last line of output, from
	// which its signature is made.
	LastOutput string `json:"last_output,omitempty"`
	// Context is the end of Reason that the workload marked as context with
	// sim.FailureContext: where or how it noticed the failure ("(read back after
	// reconnecting, before the next write)"), not what failed. Signature leaves it out.
	Context string `json:"context,omitempty"`
}

// FailureKind classifies a failure.
type FailureKind string

// Failure kinds.
const (
	KindWorkloadExit    FailureKind = "workload-exit"   // the workload exited non-zero
	KindNodeExit        FailureKind = "node-exit"       // a node exited on its own (not a fail-stop node)
	KindFailStopLoop    FailureKind = "fail-stop-loop"  // a fail-stop node kept exiting
	KindAlways          FailureKind = "always"          // an always assertion was violated
	KindUnreachable     FailureKind = "unreachable"     // an unreachable assertion was reached
	KindSometimes       FailureKind = "sometimes"       // a sometimes assertion never held (sweep-level)
	KindLinearizability FailureKind = "linearizability" // the history does not fit the model
	KindLiveness        FailureKind = "liveness"        // the workload never finished
	KindNondeterminism  FailureKind = "nondeterminism"  // -check: two runs of the seed differ
	KindWatchdog        FailureKind = "watchdog"        // VerdictWatchdog
	KindError           FailureKind = "error"           // VerdictError
	KindCanceled        FailureKind = "canceled"        // the run was cut short by its context
)

// PropertyKind is the kind of a coverage or safety property.
type PropertyKind string

// Property kinds, as in the Antithesis SDK.
const (
	PropAlways      PropertyKind = "always"
	PropSometimes   PropertyKind = "sometimes"
	PropReachable   PropertyKind = "reachable"
	PropUnreachable PropertyKind = "unreachable"
)

// PropertyHit is one property's outcome in one run.
type PropertyHit struct {
	Name    string       `json:"name"`
	Kind    PropertyKind `json:"kind"`
	Reached bool         `json:"reached"` // the assertion was evaluated at least once
	Held    bool         `json:"held"`    // sometimes/reachable: true at least once; always/unreachable: never violated
	Count   int          `json:"count"`   // evaluations
}

// Result is the outcome of one run of one seed.
type Result struct {
	// Test is the simulation test the seed ran, in a sweep of several (the Action's
	// `test: ./...`); its signature is then prefixed with the test's name.
	Test    string   `json:"test,omitempty"`
	Seed    uint64   `json:"seed"`
	Verdict Verdict  `json:"verdict"`
	Failure *Failure `json:"failure,omitempty"`
	// Faults lists the faults that were applied, in order.
	Faults []Fault `json:"faults"`
	// Swarm is the run's swarm draw (nil: no swarm); a plan saved from the run keeps it.
	Swarm SwarmDraw `json:"swarm,omitempty"`
	// Properties are the run's property hits, sorted by name.
	Properties []PropertyHit `json:"properties,omitempty"`
	// TraceHash identifies the run: two runs with the same hash did the same thing.
	TraceHash string `json:"trace_hash"`
	// TraceLines is the number of trace lines.
	TraceLines int `json:"trace_lines"`
	// EndNS is the virtual time at which the run ended.
	EndNS int64 `json:"end_ns"`
	// Checked is true when the seed was run twice and the traces compared (-check).
	Checked bool `json:"checked,omitempty"`
	// Divergence is set when -check found the two runs differ.
	Divergence *Divergence `json:"divergence,omitempty"`
	// LinUnknown is set when the linearizability checker ran out of its budget (reported
	// apart from a pass); LinDetail says which budget. Neither is part of the trace.
	LinUnknown bool   `json:"lin_unknown,omitempty"`
	LinDetail  string `json:"lin_detail,omitempty"`
	// Error is set with VerdictError.
	Error string `json:"error,omitempty"`
	// Trace is the full trace, kept only when asked for (replay).
	Trace []string `json:"trace,omitempty"`
	// SyncSites are the distinct guest source locations that called fsync or fdatasync
	// (sorted), for call-site mutants.
	SyncSites []string `json:"sync_sites,omitempty"`
	// Coverage is the coverage of the system under test, when the config asks for it
	// (field "coverage"); nil otherwise. Not part of the run's identity.
	Coverage *coverage.Coverage `json:"coverage,omitempty"`
	// Stats are counters about the run (not part of its identity).
	Stats RunStats `json:"stats"`
	// Provenance, set by the commands that write results files, records the config
	// path and the build the result came from (not part of its identity).
	Provenance *Provenance `json:"provenance,omitempty"`
}

// RunStats counts what a run did.
type RunStats struct {
	HostCalls    int64 `json:"host_calls"`
	Switches     int64 `json:"switches"`
	DiskOps      int64 `json:"disk_ops"`
	Incarnations int   `json:"incarnations"`
	// FailStopRestarts counts restarts of fail-stop nodes (on_exit "restart") after they
	// exited on their own.
	FailStopRestarts int   `json:"fail_stop_restarts,omitempty"`
	WallNS           int64 `json:"wall_ns"` // wall time of the run; informational, never shapes the run
	// CPUNS is the process's CPU time during the run (informational, never shapes the
	// run): the run's own cost when it is the only thing its process does (a replay),
	// not in an in-process sweep's parallel seeds.
	CPUNS int64 `json:"cpu_ns,omitempty"`
	// What the guests did that durability mutants act on.
	Fsyncs      int64 `json:"fsyncs,omitempty"`            // fsync of a file
	Fdatasyncs  int64 `json:"fdatasyncs,omitempty"`        // fdatasync of a file
	DirSyncs    int64 `json:"dir_syncs,omitempty"`         // fsync of a directory
	OSyncWrites int64 `json:"osync_writes,omitempty"`      // writes through O_SYNC/O_DSYNC
	Replacing   int64 `json:"replacing_renames,omitempty"` // renames over an existing file
	// InterleavePicks counts the goroutine choices of nodes built with interleave.
	InterleavePicks int64 `json:"interleave_picks,omitempty"`
}

// Failed reports whether the run found a bug (or could not run).
func (r *Result) Failed() bool {
	return r.Verdict == VerdictFail || r.Verdict == VerdictWatchdog || r.Verdict == VerdictError
}

// formatDuration prints a virtual time the way seedfall's output does: "427.268ms", "1.7052s".
func formatDuration(ns int64) string {
	return time.Duration(ns).String()
}

// String renders the result on one line.
func (r *Result) String() string {
	if r.Failure != nil {
		return fmt.Sprintf("seed %d %s at t=%s %s", r.Seed, r.Verdict, formatDuration(r.Failure.AtNS), r.Failure.Reason)
	}
	return fmt.Sprintf("seed %d %s", r.Seed, r.Verdict)
}
