// Package report renders the outcome of a sweep for people: a self-contained HTML triage
// report, Markdown for the pull-request comment and the job summary, JUnit XML for CI
// test views, and the plain-text property table of the command line.
//
// Every renderer is a pure function of its Data: the same Data gives the same bytes.
// Nothing reads a clock, and nothing ranges over a map where the order could reach
// the output. Text that comes from the system under test (failure reasons, traces,
// property names, node names) is untrusted: the renderers escape it for their format
// and never let it become markup. The package reads the engine's result types and
// nothing else of it: it never runs a simulation.
package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/coverage"
)

// Status says how a failure signature relates to the baseline.
type Status string

// Statuses of a signature.
const (
	StatusNew   Status = "new"   // not in the baseline: this change introduced it or a sweep found it first
	StatusKnown Status = "known" // in the baseline and still failing
	StatusFixed Status = "fixed" // in the baseline and no longer failing
)

// Group is one failure signature: every failing seed that hit the same bug.
type Group struct {
	// Signature is the bug's identity (engine.Signature), e.g. "sig-ab12cd34ef56".
	Signature string
	// Status relates the signature to the baseline.
	Status Status
	// Kind is the failure kind (engine.Failure.Kind).
	Kind string
	// Reason is the representative seed's failure reason. It is guest text.
	Reason string
	// Seeds are the failing seeds, ascending.
	Seeds []uint64
	// FaultClasses are the kinds of the faults before the failure (FaultClasses).
	FaultClasses []string
	// Shrunk is the minimal fault schedule; empty when the failure was not shrunk.
	Shrunk []engine.Fault
	// ShrinkNote says how shrinking went, e.g. "26 → 2 faults in 41 runs" or
	// "not shrunk: budget exhausted".
	ShrinkNote string
	// ShrunkReason and ShrunkAtNS are the failure of the minimal schedule's own run,
	// shown beside the seed's (Reason, AtNS): the same signature, but often at another
	// time with other values. ShrunkReason is empty when unknown. It is guest text.
	ShrunkReason string
	ShrunkAtNS   int64
	// Faults is the full schedule of the representative seed, for the timeline.
	Faults []engine.Fault
	// Trace is an excerpt of the representative seed's trace, the lines before the
	// failure. It is guest text.
	Trace []string
	// Replay is a command that replays the failure, e.g.
	// "seedfall replay -c seedfall.json -seed 9 -faults sig-ab12.faults.json".
	Replay string
	// FirstSeen and LastSeen are the commits on which the signature was first and last
	// seen failing; either may be empty.
	FirstSeen, LastSeen string
	// AtNS is the virtual time of the representative failure.
	AtNS int64
	// Search, when the crash-state search found the signature, says where: "crash-state
	// search of seed 1: a crash in disk op #9 of server#1 (store/log.go:88), 3 of 12
	// states there fail". When no seed of the sweep failed with it, Seeds is empty and
	// Replay replays the search's plan.
	Search string
}

// Property is one coverage or safety property counted across the sweep.
type Property struct {
	Name string // the assertion's message; guest text
	Kind string // "always", "sometimes", "reachable", "unreachable"
	// Reached is the number of seeds that evaluated the property, Held the number in
	// which it held (sometimes/reachable: true at least once; always/unreachable: never
	// violated).
	Reached, Held int
	// Verdict is "ok" or "FAIL", as the engine decided it (Properties).
	Verdict string
}

// Mutant is one durability mutation (a negative control in the simulated OS) and
// whether the sweep caught it.
type Mutant struct {
	Name   string // e.g. "fsync is a no-op"
	Site   string // where the mutation applies, e.g. "fd_datasync"
	Killed bool   // a check failed with the mutation on: the harness can see this bug class
	Seed   uint64 // the first seed that killed it, when Killed
	// Outcome is "killed", "survived", "unknown" (a seed could not be judged: watchdog,
	// worker crash) or "n/a"; empty means killed or survived as Killed says.
	Outcome string
	Reason  string // why, for unknown and n/a
	// Blind is set when an earlier run killed this mutant and this one did not: the
	// checks went blind to its bug class. It counts like a new failure.
	Blind bool
}

// Summary holds the counts of a sweep and where it ran.
type Summary struct {
	Config, Seeds, Commit, Ref, Event string
	// Total seeds run, and how they ended. Liveness counts the failed seeds whose
	// workload never finished (failure kind "liveness"); they are part of Failed.
	// Horizon counts the seeds that reached the horizon under "liveness": {"horizon":
	// "count"}, which are not failed.
	Total, Passed, Failed, Liveness, Horizon, Watchdog, Errors int
	// Checked is true when every seed ran twice and the traces were compared;
	// Divergences counts the seeds whose two runs differed.
	Checked     bool
	Divergences int
	// New, Known and Fixed count signatures by status.
	New, Known, Fixed int
	// Conclusion is "success", "failure" or "neutral".
	Conclusion string
	// ReportURL links to the full report (the run or its artifact); may be empty.
	ReportURL string
	// MutationScore is e.g. "7/7"; empty when mutation testing did not run.
	MutationScore string
	// MutationWas is the baseline's score when this run mutated too ("" otherwise);
	// Blind counts the mutants killed then and not now.
	MutationWas string
	Blind       int
	// Upgrade says which build wrote the data and which read it when the run checked an
	// upgrade across commits (the Action's input upgrade-from): "upgrade (server): data
	// written by base 3f2a1c0, read by this PR's build 9e8d7c6". Empty otherwise.
	Upgrade string
	// Tests are the simulation tests of a sweep of several (the Action's test: ./...),
	// each with its own counts; empty for a sweep of one config or test.
	Tests []TestRow
	// Search sums up the crash-state search the run did beside the sweep (the Action's
	// crash-seeds): "crash-state search of seed 1: 200 of 1149 states (budget), 1 distinct
	// failure". Empty when none ran.
	Search string
}

// TestRow is one simulation test of a sweep of several: its seeds, how many failed,
// its failing signatures (new and known) and the command that names it.
type TestRow struct {
	Name, Command                     string
	Seeds, Passed, Failed, New, Known int
}

// Data is everything a report shows.
type Data struct {
	Title      string
	Summary    Summary
	Groups     []Group
	Properties []Property
	Mutants    []Mutant
	// Coverage is the coverage of the system under test over the sweep (config
	// "coverage"), with the functions no seed reached; nil without coverage.
	Coverage *coverage.Report
}

// CommentLimit is the largest body GitHub accepts for an issue or pull-request
// comment, in bytes. Markdown output meant for a comment must stay below it.
const CommentLimit = 65536

// title returns the report's title, with a default.
func (d *Data) title() string {
	if t := strings.TrimSpace(d.Title); t != "" {
		return t
	}
	return "seedfall report"
}

// statusRank orders signatures: new first, then known, then fixed, then anything else.
func statusRank(s Status) int {
	switch s {
	case StatusNew:
		return 0
	case StatusKnown:
		return 1
	case StatusFixed:
		return 2
	}
	return 3
}

// orderedGroups returns the groups new first, then known, then fixed. Within a status
// the caller's order is kept, so a caller that lists the newest first gets them first.
func orderedGroups(gs []Group) []Group {
	out := make([]Group, len(gs))
	copy(out, gs)
	sort.SliceStable(out, func(i, j int) bool {
		return statusRank(out[i].Status) < statusRank(out[j].Status)
	})
	return out
}

// statusLabel is the word shown in a badge.
func statusLabel(s Status) string {
	switch s {
	case StatusNew, StatusKnown, StatusFixed:
		return string(s)
	case "":
		return "failing"
	}
	return string(s)
}

// verdict returns the property's verdict, derived from the counts when not given.
func (p Property) verdict() string {
	if p.Verdict != "" {
		return p.Verdict
	}
	return "FAIL" // a property without a verdict was not judged: say so
}

// Properties turns the engine's property verdicts over a sweep into report rows: the
// verdict is the engine's (PropertySummary.OK), decided in one place.
func Properties(ps []engine.PropertySummary) []Property {
	var out []Property
	for _, p := range ps {
		v := "ok"
		if !p.OK {
			v = "FAIL"
		}
		out = append(out, Property{Name: p.Name, Kind: string(p.Kind), Reached: p.SeedsReached, Held: p.SeedsTrue, Verdict: v})
	}
	return out
}

// kindRank orders property kinds as the command line prints them.
func kindRank(k string) int {
	switch engine.PropertyKind(k) {
	case engine.PropAlways:
		return 0
	case engine.PropSometimes:
		return 1
	case engine.PropReachable:
		return 2
	case engine.PropUnreachable:
		return 3
	}
	return 4
}

// sortedProperties orders properties by kind, then name, so that the output does not
// depend on the order in which a sweep merged its shards.
func sortedProperties(props []Property) []Property {
	out := make([]Property, len(props))
	copy(out, props)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := kindRank(a.Kind), kindRank(b.Kind); ra != rb {
			return ra < rb
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	return out
}

// oneLine makes guest text safe for a one-line plain-text field: control characters,
// line breaks included, become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// clip shortens s to at most n bytes, on a rune boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// formatSeeds lists seeds compactly, runs of consecutive seeds as ranges ("1-3, 9, 17"),
// and at most max items, then "… and N more".
func formatSeeds(seeds []uint64, max int) string {
	var items []string
	shown := 0
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if max > 0 && len(items) == max {
			break
		}
		if j > i {
			items = append(items, strconv.FormatUint(seeds[i], 10)+"-"+strconv.FormatUint(seeds[j], 10))
		} else {
			items = append(items, strconv.FormatUint(seeds[i], 10))
		}
		shown += j - i + 1
		i = j + 1
	}
	s := strings.Join(items, ", ")
	if rest := len(seeds) - shown; rest > 0 {
		s += fmt.Sprintf(" … and %d more", rest)
	}
	return s
}

// plural returns "1 seed" or "2 seeds".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// determinismLine says what the determinism check found.
func determinismLine(s Summary) string {
	switch {
	case !s.Checked:
		return "determinism not checked (run with -check to run every seed twice and compare traces)"
	case s.Divergences == 0:
		return fmt.Sprintf("deterministic: every seed ran twice, traces identical (%s checked)", plural(s.Total, "seed"))
	default:
		return fmt.Sprintf("NONDETERMINISTIC: %s of %d gave different traces on the second run", plural(s.Divergences, "seed"), s.Total)
	}
}

// fmtNS prints a virtual time as seedfall's output does.
func fmtNS(ns int64) string { return time.Duration(ns).String() }

// FaultClasses returns the sorted classes (Fault.Class) of the faults applied before the
// failure: their kinds, with a crash during a disk op reported as "crash-mid-op".
func FaultClasses(r *engine.Result) []string {
	if r == nil || r.Failure == nil {
		return nil
	}
	kinds := map[string]bool{}
	for _, f := range r.Faults {
		if f.AtNS <= r.Failure.AtNS {
			kinds[f.Class()] = true
		}
	}
	ks := make([]string, 0, len(kinds))
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
