package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The workload's say over the faults, as in the Antithesis SDK's lifecycle:
//
//   - setup complete (sim.SetupComplete, or the Antithesis SDK's
//     lifecycle.SetupComplete line in its local output): with the config's
//     "faults": {"start_on": "setup_complete"}, the generated faults start then, instead
//     of at start_after, so a cluster that takes a while to form is not hit while it
//     forms. The plan is drawn at that moment for (now + start_after, horizon], from the
//     seed's plan stream, so the same seed draws the same plan.
//   - a quiet period (sim.StopFaults, Antithesis' ANTITHESIS_STOP_FAULTS): faults that
//     would fire in [now, now+d) are dropped; faults already in effect run their course
//     (a partition heals at its time, a crashed node restarts at its). Dropped faults no
//     longer count for liveness.quiet, so a workload that stops the faults for the rest
//     of the run and then checks its eventual properties is held to liveness.quiet from
//     the end of the last fault that did happen.
//
// A plan given to the run (replay -faults, shrink) is used as it is: the setup signal
// does not draw another. Quiet periods still apply to it, and the faults a run applied
// (its saved plan) never include dropped ones, so a replay of a saved plan matches.

// Values of FaultConfig.StartOn.
const (
	StartOnTime          = "time"           // at start_after (the default)
	StartOnSetupComplete = "setup_complete" // when the workload says its setup is complete
)

// awaitsSetup reports whether the generated plan waits for the workload's setup signal.
func (w *world) awaitsSetup() bool {
	return w.opt.plan == nil && w.cfg.Faults.StartOn == StartOnSetupComplete
}

// setupComplete is the workload's signal that its setup is done.
func (w *world) setupComplete(inc *incarnation, details string) {
	if w.setupDone {
		return // the SDK may say it once per process; the first time counts
	}
	w.setupDone = true
	if details != "" {
		details = " " + details
	}
	w.tracef(inc.label, "setup complete%s", details)
	if !w.awaitsSetup() {
		return
	}
	seed := w.seed
	if w.reseeded {
		seed = w.opt.futureSeed // a future that cause re-randomized draws its own plan
	}
	plan := generatePlan(w.cfg, seed, w.now+int64(w.cfg.Faults.StartAfter), w.nodes)
	w.tracef("world", "faults start (start_on setup_complete): %d planned", len(plan.Faults))
	w.planned = append(w.planned, plan.Faults...)
	w.rescheduleFaults(plan.Faults)
	w.scheduleQuiet()
}

// stopFaults starts a quiet period of d ns (d <= 0: the rest of the run).
func (w *world) stopFaults(inc *incarnation, d int64) {
	end := int64(w.cfg.Horizon) + 1
	if d > 0 && w.now+d < end {
		end = w.now + d
	}
	w.quietUntil = max(w.quietUntil, end)
	if d > 0 {
		w.tracef(inc.label, "stop faults for %s (until %s)", formatDuration(d), formatDuration(w.quietUntil))
	} else {
		w.tracef(inc.label, "stop faults for the rest of the run")
	}
	// Drop the faults that would fire inside the window: planned ones and crashes
	// armed for a node's next disk op. Those pinned to a disk op by a plan file fire
	// where the plan says: a plan is exact.
	var keep []Fault
	for _, f := range w.planned {
		if f.DiskOp == 0 && f.ReadOp == 0 && f.AtNS >= w.now && f.AtNS < w.quietUntil {
			continue
		}
		keep = append(keep, f)
	}
	w.planned = keep
	for _, n := range w.nodes {
		if n.crashNextOp {
			w.tracef("fault", "mid-op crash of %s dropped: quiet period", n.name)
			n.crashNextOp, n.crashSkip, n.midPlanned = false, 0, nil
		}
		if n.inc != nil && n.inc.failNextSync {
			n.inc.failNextSync, n.inc.eioFault = false, nil
		}
		if n.inc != nil {
			n.inc.devNext = nil
		}
	}
	w.scheduleQuiet()
}

// quiet reports whether a fault due now falls in a quiet period; it traces the drop.
func (w *world) quiet(f Fault) bool {
	if w.now >= w.quietUntil {
		return false
	}
	w.tracef("fault", "%s dropped: quiet period until %s", f.text(faultBrief), formatDuration(w.quietUntil))
	return true
}

// validateStartOn checks faults.start_on.
func validateStartOn(v string) error {
	switch v {
	case "", StartOnTime, StartOnSetupComplete:
		return nil
	}
	return fmt.Errorf("field faults.start_on: %q is not a start (want %q, the default, or %q)", v, StartOnTime, StartOnSetupComplete)
}

// noteSDKWrite marks a disk op that writes the Antithesis SDK's local output while the
// run still waits for the setup signal, so that scanSDKSetup reads the file after it.
func (inc *incarnation) noteSDKWrite(kind, path string) {
	w := inc.w
	if !w.sim.antithesis || w.setupDone || !inc.node.workload || kind != "write" {
		return
	}
	inc.sdkWrote = path == inc.antithesisOutputPath()
}

// scanSDKSetup reads the SDK's output after a write to it and takes a
// {"antithesis_setup":{"status":"complete",...}} line as the workload's setup signal
// (lifecycle.SetupComplete of the Antithesis Go SDK).
func (inc *incarnation) scanSDKSetup() {
	if !inc.sdkWrote {
		return
	}
	inc.sdkWrote = false
	fs := inc.node.disk
	ino, err := fs.Lookup(inc.antithesisOutputPath())
	if err != nil {
		return
	}
	st, err := fs.Stat(ino)
	if err != nil || st.Dir {
		return
	}
	data := make([]byte, st.Size)
	n, _ := fs.ReadAt(ino, data, 0)
	for _, line := range bytes.Split(data[:n], []byte("\n")) {
		if !bytes.Contains(line, []byte(`"antithesis_setup"`)) {
			continue
		}
		var obj struct {
			Setup struct {
				Status  string          `json:"status"`
				Details json.RawMessage `json:"details"`
			} `json:"antithesis_setup"`
		}
		if json.Unmarshal(line, &obj) == nil && obj.Setup.Status == "complete" {
			inc.w.setupComplete(inc, compactJSON(obj.Setup.Details))
			return
		}
	}
}
