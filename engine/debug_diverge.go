package engine

import (
	"context"
	"fmt"
)

// -check, the third debugging tool (after Shrink and Cause, debug_shrink.go and
// debug_cause.go): a seed run twice must give the same trace, line for line; the
// first difference is the Divergence, and a run that diverges fails as
// nondeterminism.

// Divergence describes the first difference between two runs of one seed.
type Divergence struct {
	Line   int      `json:"line"`   // 1-based index of the first differing line
	First  string   `json:"first"`  // that line in the first run
	Second string   `json:"second"` // that line in the second run
	Before []string `json:"before"` // up to 5 lines before it (identical in both runs)
}

// check runs seed a second time with the options of the first run r and records in r
// whether the two traces differ.
func (s *Sim) check(ctx context.Context, seed uint64, ro runOptions, opt RunOptions, r *Result) {
	ro.traceHook = nil
	w2 := newWorld(s, seed, ro)
	w2.outDir = opt.OutDir
	r2 := w2.runProfiled(ctx)
	r.Checked = true
	r.Divergence = diverge(r.Trace, r2.Trace)
	if r.Divergence == nil && r.TraceHash != r2.TraceHash {
		r.Divergence = &Divergence{Line: len(r.Trace) + 1, First: "(end)", Second: "(end)"}
	}
	if r.Divergence != nil && r.Failure == nil {
		r.Verdict = VerdictFail
		r.Failure = &Failure{Kind: KindNondeterminism, AtNS: r.EndNS,
			Reason: fmt.Sprintf("two runs of seed %d differ at trace line %d", seed, r.Divergence.Line)}
		r.Failure.Signature = Signature(r)
	}
	if !opt.Trace {
		r.Trace = nil
	}
}

// diverge returns the first difference between two traces, or nil.
func diverge(a, b []string) *Divergence {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return &Divergence{Line: i + 1, First: a[i], Second: b[i], Before: a[max(0, i-5):i]}
		}
	}
	if len(a) != len(b) {
		d := &Divergence{Line: n + 1, First: "(end of trace)", Second: "(end of trace)", Before: a[max(0, n-5):n]}
		if n < len(a) {
			d.First = a[n]
		}
		if n < len(b) {
			d.Second = b[n]
		}
		return d
	}
	return nil
}
