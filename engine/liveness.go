package engine

import (
	"fmt"
	"time"
)

// Liveness policies for a run whose workload is still running at the horizon.
const (
	LivenessFail  = "fail"  // a liveness failure (the default)
	LivenessCount = "count" // counted apart as "horizon", not failed
)

// KindLiveness is the Failure.Kind of a run whose workload never finished: by the
// horizon, or within the quiet period after the last fault.
const KindLiveness = "liveness"

// LivenessConfig says what a workload that never finishes means.
//
//	"liveness": {"horizon": "fail", "quiet": "10s"}
type LivenessConfig struct {
	// Horizon is what a run whose workload has not finished at the horizon is: "fail"
	// (the default) makes it a liveness failure, reported like any failure with its own
	// signature (from the workload's last output line), its faults and its replay
	// command; "count" counts it apart as "horizon" without failing the sweep, for a
	// workload that runs until the horizon by design.
	Horizon string `json:"horizon,omitempty"`
	// Quiet, when set, is how long the workload has after the last fault ended (the
	// last heal, restart or end of a pause) to finish: a run whose workload is still
	// running then fails with kind "liveness" at that moment. With no fault at all, the
	// quiet period starts at time 0. Shorter than the horizon.
	Quiet Duration `json:"quiet,omitempty"`
}

// countsHorizon reports whether a run that reaches the horizon is counted, not failed.
func (l LivenessConfig) countsHorizon() bool { return l.Horizon == LivenessCount }

func (l LivenessConfig) validate(horizon Duration) error {
	switch l.Horizon {
	case "", LivenessFail, LivenessCount:
	default:
		return fmt.Errorf("field liveness.horizon: %q is not a liveness policy (want \"fail\", the default, or \"count\")", l.Horizon)
	}
	if l.Quiet < 0 {
		return fmt.Errorf("field liveness.quiet: %s is negative", time.Duration(l.Quiet))
	}
	if horizon == 0 {
		horizon = Duration(60 * time.Second)
	}
	if l.Quiet >= horizon {
		return fmt.Errorf("field liveness.quiet: %s is not shorter than the horizon %s, so it could never end a run (want a quiet period such as \"10s\")",
			time.Duration(l.Quiet), time.Duration(horizon))
	}
	return nil
}

// faultEnd is when a fault's effect ends: a crashed node's restart, the heal of a
// partition, the end of a pause or latency spike; the fault itself for the rest.
func faultEnd(f Fault) int64 {
	switch f.Kind {
	case FaultCrash, FaultKill:
		return f.AtNS + f.RestartNS
	case FaultPartition, FaultPause, FaultLatency, FaultSplit:
		return f.AtNS + f.DurationNS
	}
	return f.AtNS
}

// lastFaultEnd is the latest end of a fault the run applied or still has planned.
func (w *world) lastFaultEnd() int64 {
	end := int64(0)
	for _, f := range w.planned {
		end = max(end, faultEnd(f))
	}
	for _, f := range w.applied {
		end = max(end, faultEnd(f))
	}
	return end
}

// scheduleQuiet puts the quiet-period check on the event queue, when the config has
// one. The check re-arms itself while faults keep moving the last fault's end later.
func (w *world) scheduleQuiet() {
	q := int64(w.cfg.Liveness.Quiet)
	if q <= 0 {
		return
	}
	w.quietGen++
	gen := w.quietGen
	var check func()
	check = func() {
		if w.done || gen != w.quietGen {
			return
		}
		end := w.lastFaultEnd()
		if due := end + q; due > w.now {
			w.schedule(due, check)
			return
		}
		wl := w.workloadNode()
		who := wl.name
		if wl.inc != nil {
			who = wl.inc.label
		}
		w.fail(KindLiveness, who, fmt.Sprintf("%s had not finished %s after the last fault ended at %s (liveness.quiet), %s; its last output: %s",
			who, FormatDuration(q), FormatDuration(end), wl.waitState(w.now), lastOutput(wl)))
		w.failure.LastOutput = lastOutputLine(wl)
	}
	w.schedule(w.lastFaultEnd()+q, check)
}

// livenessAtHorizon turns a run whose workload is still running at the horizon into a
// liveness failure, unless the config counts such runs. It adds nothing to the trace,
// so a seed's trace is the same under either policy.
func (w *world) livenessAtHorizon() {
	if w.failure != nil || w.cfg.Liveness.countsHorizon() {
		return
	}
	wl := w.workloadNode()
	who := wl.name
	if wl.inc != nil {
		who = wl.inc.label
	}
	w.verdict = VerdictFail
	w.failure = &Failure{
		Kind: KindLiveness, Node: who, AtNS: w.now, LastOutput: lastOutputLine(wl),
		Reason: fmt.Sprintf("%s had not finished at the horizon %s, %s; its last output: %s",
			who, FormatDuration(int64(w.cfg.Horizon)), wl.waitState(w.now), lastOutput(wl)),
	}
}

// workloadNode returns the workload's node.
func (w *world) workloadNode() *node {
	for _, n := range w.nodes {
		if n.workload {
			return n
		}
	}
	return w.nodes[len(w.nodes)-1]
}

// waitState describes what the node's live incarnation is doing, for a liveness
// failure's reason (not its signature: the same stall may be caught waiting on a timer
// on one seed and on a socket on another).
func (n *node) waitState(now int64) string {
	inc := n.inc
	switch {
	case inc == nil:
		return "not running"
	case n.pausedTo > now:
		return "paused"
	case inc.state == incBlocked && inc.deadline >= 0:
		return "waiting with a timer pending"
	case inc.state == incBlocked:
		return "waiting for I/O with no timer pending"
	case inc.state == incRunnable || inc.state == incRunning:
		return "still running"
	}
	return "not started"
}

func lastOutputLine(n *node) string {
	if n.inc == nil {
		return ""
	}
	return n.inc.lastLine
}

func lastOutput(n *node) string {
	if l := lastOutputLine(n); l != "" {
		return l
	}
	return "(none)"
}
