package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// ShrinkReport is shrink's -json output and the MCP shrink tool's result, the shape on
// the product page: minimal_faults, failure.reason, failure.faults_before_failure.
type ShrinkReport struct {
	Seed          uint64         `json:"seed"`
	Signature     string         `json:"signature"`
	FaultsBefore  int            `json:"faults_before"`
	MinimalFaults int            `json:"minimal_faults"`
	Runs          int            `json:"runs"`
	PlanFile      string         `json:"plan_file"`
	Replay        string         `json:"replay"`
	ReplaysExact  bool           `json:"replays_exactly"`
	Exhausted     bool           `json:"budget_exhausted,omitempty"`
	Failure       ShrinkFailure  `json:"failure"`
	Plan          []engine.Fault `json:"plan"`
	// Swarm is the minimal plan's swarm draw and SwarmKindsOff the kinds shrink turned
	// off in it (swarm runs only).
	Swarm         engine.SwarmDraw   `json:"swarm,omitempty"`
	SwarmKindsOff []engine.FaultKind `json:"swarm_kinds_off,omitempty"`
}

// ShrinkFailure is the failure the minimal plan produces.
type ShrinkFailure struct {
	Reason              string   `json:"reason"`
	AtNS                int64    `json:"at_ns"`
	FaultsBeforeFailure []string `json:"faults_before_failure"`
}

// NewShrinkReport describes a shrink whose minimal plan was saved to planFile and
// replays with the command replay.
func NewShrinkReport(res *engine.ShrinkResult, planFile, replay string) ShrinkReport {
	before := FaultsBefore(res.Minimal)
	return ShrinkReport{Seed: res.Seed, Signature: res.Signature, FaultsBefore: res.Before, MinimalFaults: len(before),
		Runs: res.Runs, PlanFile: planFile, Replay: replay, ReplaysExact: res.Replays, Exhausted: res.Exhausted,
		Failure: ShrinkFailure{Reason: res.Minimal.Failure.Reason, AtNS: res.Minimal.Failure.AtNS, FaultsBeforeFailure: FaultLines(before)},
		Plan:    res.Plan.Faults, Swarm: res.Plan.Swarm, SwarmKindsOff: res.KindsOff}
}

// CauseBars renders the P(fail) curve one moment a line: time, percentage, a bar, and
// the fault that came just before the moment.
func CauseBars(res *engine.CauseResult) []string {
	w := 0
	for _, m := range res.Moments {
		w = max(w, len(time.Duration(m.AtNS).String()))
	}
	var out []string
	for _, m := range res.Moments {
		t := time.Duration(m.AtNS).String()
		bar := strings.Repeat("█", int(m.P*15+0.5))
		line := fmt.Sprintf("%s%s %3.0f%% %s", strings.Repeat(" ", w-len(t)), t, m.P*100, bar)
		if m.Fault != "" {
			line += " <- " + m.Fault
		}
		out = append(out, strings.TrimRight(line, " "))
	}
	return out
}
