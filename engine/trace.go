package engine

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
)

// tracef appends one line to the trace: virtual time, who, what.
func (w *world) tracef(who, format string, args ...any) {
	line := fmt.Sprintf("%12s %s %s", formatDuration(w.now), who, fmt.Sprintf(format, args...))
	w.addLine(line)
}

func (w *world) addLine(line string) {
	w.traceN++
	w.traceHash.Write([]byte(line))
	w.traceHash.Write([]byte{'\n'})
	if w.opt.keepTrace {
		w.trace = append(w.trace, line)
	}
	if w.opt.traceHook != nil {
		w.opt.traceHook(line)
	}
}

// fail records the first failure and ends the run.
func (w *world) fail(kind FailureKind, who, reason string) {
	if w.failure != nil {
		return
	}
	w.failure = &Failure{Kind: kind, Node: who, Reason: reason, AtNS: w.now}
	if who != "" && !strings.HasPrefix(reason, who) {
		w.failure.Reason = who + ": " + reason
	}
	w.verdict = VerdictFail
	w.done = true
	w.tracef("world", "FAIL %s", w.failure.Reason)
}

func (w *world) result() *Result {
	r := &Result{
		Seed:       w.seed,
		Verdict:    w.verdict,
		Failure:    w.failure,
		Faults:     w.applied,
		Swarm:      w.swarm,
		TraceLines: w.traceN,
		EndNS:      w.now,
		Stats:      w.stats,
	}
	if r.Verdict == "" {
		r.Verdict = VerdictPass
	}
	if r.Faults == nil {
		r.Faults = []Fault{}
	}
	if r.Failure == nil && r.Verdict != VerdictHorizon && r.Verdict != VerdictWatchdog {
		w.checkHistory(r)
	}
	if r.Failure != nil && r.Failure.Signature == "" {
		r.Failure.Signature = Signature(r)
	}
	names := make([]string, 0, len(w.props))
	for k := range w.props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		r.Properties = append(r.Properties, *w.props[k])
	}
	for _, k := range sortedSet(w.syncSites) {
		r.SyncSites = append(r.SyncSites, k)
	}
	sum := w.traceHash.Sum(nil)
	r.TraceHash = hex.EncodeToString(sum[:16])
	if w.opt.keepTrace {
		r.Trace = w.trace
	}
	if w.cfg.Coverage != nil {
		r.Coverage = w.cov.Coverage()
	}
	r.Stats.WallNS = int64(time.Since(w.wallStart))
	if c, ok := cpuClock(); ok && w.cpuStart > 0 {
		r.Stats.CPUNS = int64(c - w.cpuStart)
	}
	return r
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
