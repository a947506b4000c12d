package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/coverage"
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
	Liveness int  `json:"liveness"`
	Watchdog int  `json:"watchdog"`
	Errors   int  `json:"errors"`
	Checked  bool `json:"checked"`
	// FirstFailureRun is, for a sweep with -stop-on-fail, the 1-based position in the
	// seed list of the first seed that failed (0: none did): the runs it took to find a
	// failure.
	FirstFailureRun int `json:"first_failure_run,omitempty"`
	Diverged        int `json:"diverged"`
	LinUnknown      int `json:"lin_unknown"`
	// FailStopRestarts counts restarts of fail-stop nodes (on_exit "restart") after
	// their own exits, over the sweep, and FailStopSeeds the seeds that had any.
	FailStopRestarts int              `json:"fail_stop_restarts,omitempty"`
	FailStopSeeds    int              `json:"fail_stop_seeds,omitempty"`
	Signatures       []SignatureGroup `json:"signatures"`
	// CouldNotRun is the seeds the tool could not run (VerdictError), by message: tool
	// errors, not findings, so they are not among the Signatures.
	CouldNotRun []ErrorGroup             `json:"could_not_run,omitempty"`
	Properties  []engine.PropertySummary `json:"properties"`
	PropFails   []string                 `json:"property_failures,omitempty"`
	Results     string                   `json:"results_file,omitempty"`
	// Coverage of the system under test over the sweep (config "coverage").
	Coverage *CoverageSummary `json:"coverage,omitempty"`
	WallSec  float64          `json:"wall_seconds"`
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
	// Results are the group's results in the order given (ascending seed in a sweep),
	// each with its Failure and signature filled in.
	Results []*engine.Result `json:"-"`
}

// GroupFailures groups the failed results by signature, ordered by their lowest seed. It
// is the one grouping of seedfall run, the MCP server and seedfall ci. The rule:
//   - a fail or watchdog result is grouped; one without a Failure gets one named by its
//     verdict (results are copied, never changed);
//   - an error result is the tool failing to run the seed, not a finding of the system
//     under test: it is never grouped, and GroupErrors lists it apart by its message.
func GroupFailures(results []*engine.Result) []SignatureGroup {
	idx := map[string]int{}
	var groups []SignatureGroup
	for _, r := range results {
		if r.Verdict != engine.VerdictFail && r.Verdict != engine.VerdictWatchdog {
			continue
		}
		if r.Failure == nil || r.Failure.Signature == "" {
			c := *r
			if c.Failure == nil {
				c.Failure = &engine.Failure{Kind: engine.FailureKind(c.Verdict), Reason: fmt.Sprintf("run %s", c.Verdict), AtNS: c.EndNS}
				if c.Verdict == engine.VerdictWatchdog {
					c.Failure.Reason = "run exceeded its wall-clock budget (a guest spinning without host calls)"
				}
			}
			f := *c.Failure
			f.Signature = engine.Signature(&c)
			c.Failure = &f
			r = &c
		}
		sig := r.Failure.Signature
		i, ok := idx[sig]
		if !ok {
			i = len(groups)
			idx[sig] = i
			groups = append(groups, SignatureGroup{Signature: sig, Kind: string(r.Failure.Kind), Reason: r.Failure.Reason, First: r, Faults: FaultsBefore(r)})
		}
		groups[i].Seeds = append(groups[i].Seeds, r.Seed)
		groups[i].Results = append(groups[i].Results, r)
	}
	return groups
}

// ErrorGroup is the seeds a sweep could not run for one reason (GroupFailures).
type ErrorGroup struct {
	Error string   `json:"error"`
	Seeds []uint64 `json:"seeds"`
}

// GroupErrors groups the error results by their message, ordered by their lowest seed.
func GroupErrors(results []*engine.Result) []ErrorGroup {
	idx := map[string]int{}
	var groups []ErrorGroup
	for _, r := range results {
		if r.Verdict != engine.VerdictError {
			continue
		}
		msg := r.Error
		if msg == "" && r.Failure != nil {
			msg = r.Failure.Reason
		}
		i, ok := idx[msg]
		if !ok {
			i = len(groups)
			idx[msg] = i
			groups = append(groups, ErrorGroup{Error: msg})
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
	s.CouldNotRun = GroupErrors(results)
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

// ReplayCommand is the command that replays seed of config, with flags appended
// ("-faults plan.json"): the one place seedfall's output spells it.
//
// For a config `seedfall test` derived from a simulation test, the command is the test's:
// seedfall test ./pkg -run '^TestX$' -seed 9.
func ReplayCommand(config string, seed uint64, flags ...string) string {
	cmd := fmt.Sprintf("seedfall replay -c %s -seed %d", config, seed)
	if ref, ok := TestOf(config); ok {
		cmd = fmt.Sprintf("%s -seed %d", ref.Command(), seed)
	}
	for _, f := range flags {
		if f = strings.TrimSpace(f); f != "" {
			cmd += " " + f
		}
	}
	return cmd
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

// FaultLines renders faults aligned on their times, as on the product page. The text is
// Fault.String's, the one builder of fault text; this only pads its leading time.
func FaultLines(fs []engine.Fault) []string {
	lines := make([]string, len(fs))
	w := 0
	for i, f := range fs {
		lines[i] = f.String()
		w = max(w, timeWidth(lines[i]))
	}
	for i, l := range lines {
		lines[i] = strings.Repeat(" ", w-timeWidth(l)) + l
	}
	return lines
}

// timeWidth is the width of the time that starts a Fault.String line ("AT KIND NODE...").
func timeWidth(line string) int {
	if i := strings.IndexByte(line, ' '); i >= 0 {
		return i
	}
	return len(line)
}

// CoverageSummary is the coverage of the system under test over a sweep: per package
// the statements that any seed reached, and the functions no seed entered.
type CoverageSummary struct {
	// Dir is where Go's coverage data was written (run -cover), if anywhere.
	Dir       string               `json:"dir,omitempty"`
	Packages  []coverage.Package   `json:"packages"`
	Unreached []coverage.Unreached `json:"unreached_funcs"`
}

// SummarizeCoverage reads a sweep's merged coverage against the binaries' meta-data.
func SummarizeCoverage(c *coverage.Coverage) (*CoverageSummary, error) {
	rep, err := c.Report()
	if err != nil {
		return nil, err
	}
	return &CoverageSummary{Packages: rep.Packages, Unreached: rep.Unreached}, nil
}

// CoverageLines renders a coverage summary for the terminal: one line per package,
// then the count of unreached functions (and the first few of them).
func CoverageLines(c *CoverageSummary) []string {
	w := 0
	for _, p := range c.Packages {
		w = max(w, len(p.Path))
	}
	out := []string{"coverage (statements reached by any seed):"}
	for _, p := range c.Packages {
		out = append(out, fmt.Sprintf("  %-*s %5.1f%%  (%d of %d statements)", w, p.Path, p.Percent, p.Covered, p.Statements))
	}
	if n := len(c.Unreached); n > 0 {
		out = append(out, fmt.Sprintf("  %d %s no seed reached:", n, pluralWord(n, "function", "functions")))
		for i, u := range c.Unreached {
			if i == 10 {
				out = append(out, fmt.Sprintf("    ... and %d more", n-10))
				break
			}
			out = append(out, fmt.Sprintf("    %s.%s (%s:%d)", lastElem(u.Pkg), u.Func, u.File, u.Line))
		}
	}
	if c.Dir != "" {
		out = append(out, fmt.Sprintf("  coverage data in %s: go tool covdata percent -i %s", c.Dir, c.Dir))
		out = append(out, fmt.Sprintf("  source view from anywhere: go tool cover -html %s", filepath.Join(c.Dir, engine.CoverageProfileName)))
	}
	return out
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func lastElem(pkg string) string {
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		return pkg[i+1:]
	}
	return pkg
}
