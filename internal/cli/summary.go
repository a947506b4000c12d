package cli

import (
	"fmt"
	"strings"

	"github.com/seedfall/seedfall/engine"
)

// SweepSummary is the -json output of run.
type SweepSummary struct {
	Config  string `json:"config"`
	Seeds   int    `json:"seeds"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Horizon int    `json:"horizon"`
	// Liveness counts the failed seeds whose workload never finished (by the horizon,
	// or within liveness.quiet of the last fault); they are part of Failed.
	Liveness   int  `json:"liveness"`
	Watchdog   int  `json:"watchdog"`
	Errors     int  `json:"errors"`
	Checked    bool `json:"checked"`
	Diverged   int  `json:"diverged"`
	LinUnknown int  `json:"lin_unknown"`
	// FailStopRestarts counts restarts of fail-stop nodes (on_exit "restart") after
	// their own exits, over the sweep, and FailStopSeeds the seeds that had any.
	FailStopRestarts int                      `json:"fail_stop_restarts,omitempty"`
	FailStopSeeds    int                      `json:"fail_stop_seeds,omitempty"`
	Signatures       []SignatureGroup         `json:"signatures"`
	Properties       []engine.PropertySummary `json:"properties"`
	PropFails        []string                 `json:"property_failures,omitempty"`
	Results          string                   `json:"results_file,omitempty"`
	WallSec          float64                  `json:"wall_seconds"`
}

// SignatureGroup is one distinct failure of a sweep: the seeds that hit it, and the
// lowest of them in full.
type SignatureGroup struct {
	Signature string         `json:"signature"`
	Kind      string         `json:"kind"`
	Reason    string         `json:"reason"`
	Seeds     []uint64       `json:"seeds"`
	First     *engine.Result `json:"first"`
	Faults    []engine.Fault `json:"faults_before_failure"`
}

// GroupFailures groups failing results by signature, ordered by their lowest seed.
func GroupFailures(results []*engine.Result) []SignatureGroup {
	idx := map[string]int{}
	var groups []SignatureGroup
	for _, r := range results {
		if !r.Failed() || r.Failure == nil {
			continue
		}
		sig := r.Failure.Signature
		if sig == "" {
			sig = engine.Signature(r)
		}
		i, ok := idx[sig]
		if !ok {
			i = len(groups)
			idx[sig] = i
			groups = append(groups, SignatureGroup{Signature: sig, Kind: r.Failure.Kind, Reason: r.Failure.Reason, First: r, Faults: FaultsBefore(r)})
		}
		groups[i].Seeds = append(groups[i].Seeds, r.Seed)
	}
	return groups
}

// Summarize counts a sweep's verdicts, groups its failures and aggregates its properties.
func Summarize(cfgPath string, results []*engine.Result) SweepSummary {
	s := SweepSummary{Config: cfgPath, Seeds: len(results)}
	for _, r := range results {
		switch r.Verdict {
		case engine.VerdictPass:
			s.Passed++
		case engine.VerdictHorizon:
			s.Passed++
			s.Horizon++
		case engine.VerdictFail:
			s.Failed++
			if r.Failure != nil && r.Failure.Kind == engine.KindLiveness {
				s.Liveness++
			}
		case engine.VerdictWatchdog:
			s.Watchdog++
		case engine.VerdictError:
			s.Errors++
		}
		if r.Checked {
			s.Checked = true
		}
		if r.Divergence != nil {
			s.Diverged++
		}
		if r.LinUnknown {
			s.LinUnknown++
		}
		if n := r.Stats.FailStopRestarts; n > 0 {
			s.FailStopRestarts += n
			s.FailStopSeeds++
		}
	}
	s.Signatures = GroupFailures(results)
	s.Properties = engine.AggregateProperties(results)
	for _, p := range s.Properties {
		if p.OK {
			continue
		}
		switch p.Kind {
		case engine.PropSometimes:
			s.PropFails = append(s.PropFails, fmt.Sprintf("sometimes %q was never true (reached on %d seeds)", p.Name, p.SeedsReached))
		case engine.PropReachable:
			s.PropFails = append(s.PropFails, fmt.Sprintf("reachable %q was never reached", p.Name))
		}
	}
	return s
}

// FaultsBefore returns the faults applied up to the failure.
func FaultsBefore(r *engine.Result) []engine.Fault {
	var out []engine.Fault
	for _, f := range r.Faults {
		if r.Failure == nil || f.AtNS <= r.Failure.AtNS {
			out = append(out, f)
		}
	}
	return out
}

// FaultLines renders faults aligned on their times, as on the product page.
func FaultLines(fs []engine.Fault) []string {
	w := 0
	for _, f := range fs {
		w = max(w, len(engine.FormatDuration(f.AtNS)))
	}
	var out []string
	for _, f := range fs {
		t := engine.FormatDuration(f.AtNS)
		out = append(out, strings.Repeat(" ", w-len(t))+f.String())
	}
	return out
}
