package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// CauseOptions tune Cause.
type CauseOptions struct {
	// Plan is the failing run's plan; nil means the seed's own.
	Plan *FaultPlan
	// Moments is the number of evenly spaced moments (default 20); a moment just before
	// and just after each fault is added.
	Moments int
	// Futures is the number of alternate futures per moment (default 20).
	Futures int
	Workers int
	// Progress is called as futures complete.
	Progress func(done, total int)
	// Run runs each seed (default: the Sim's own Run, in this process); a worker pool's
	// Run (internal/worker) runs them in worker processes.
	Run func(ctx context.Context, seed uint64, opt RunOptions) *Result
}

// Moment is one point of the P(fail) curve.
type Moment struct {
	AtNS int64 `json:"at_ns"`
	// Fault is set when this moment comes right after a fault: its description.
	Fault string  `json:"fault,omitempty"`
	Runs  int     `json:"runs"`
	Fails int     `json:"fails"`
	P     float64 `json:"p_fail"`
}

// CauseResult is the probability of failure over the failing run's timeline.
type CauseResult struct {
	Seed    uint64   `json:"seed"`
	Failure *Failure `json:"failure"`
	Moments []Moment `json:"moments"`
	// Jump names the biggest rise of P(fail) between consecutive moments.
	Jump    *Jump `json:"biggest_jump,omitempty"`
	Futures int   `json:"futures"`
	WallNS  int64 `json:"wall_ns"`
}

// Jump is a rise of P(fail) from one moment to the next, with the faults between them.
type Jump struct {
	FromP  float64  `json:"from_p"`
	ToP    float64  `json:"to_p"`
	AtNS   int64    `json:"at_ns"`
	Faults []string `json:"faults"`
	// Summary reads like "0% -> 75% after the crash during disk op #56".
	Summary string `json:"summary"`
}

// Cause replays a failing seed exactly up to a series of moments and, from each,
// re-randomizes the whole future (scheduling, latency, tearing and every future fault,
// drawn anew from the config's rates). The share of futures that fail with the same
// signature is P(fail) from that moment on: bystander faults leave it flat; the real cause
// makes it jump. No snapshots are needed because replay is exact.
func (s *Sim) Cause(ctx context.Context, seed uint64, opt CauseOptions) (*CauseResult, error) {
	start := time.Now()
	if opt.Moments <= 0 {
		opt.Moments = 20
	}
	if opt.Futures <= 0 {
		opt.Futures = 20
	}
	if opt.Workers <= 0 {
		opt.Workers = 2
	}
	run := opt.Run
	if run == nil {
		run = s.Run
	}
	orig := run(ctx, seed, RunOptions{Plan: opt.Plan})
	if orig.Verdict != VerdictFail || orig.Failure == nil {
		return nil, fmt.Errorf("seed %d does not fail (%s): no failure to explain", seed, orig.Verdict)
	}
	sig := orig.Failure.Signature
	end := orig.Failure.AtNS
	// Moments: evenly spaced, plus just before and just after each fault.
	type mom struct {
		at    int64
		fault string
	}
	var moms []mom
	for i := 0; i < opt.Moments; i++ {
		moms = append(moms, mom{at: end * int64(i) / int64(opt.Moments)})
	}
	for _, f := range orig.Faults {
		if f.AtNS > end {
			continue
		}
		at := f.AtNS
		if f.ArmedNS > 0 && f.ArmedNS < at {
			// A mid-op crash is decided when it is armed; it fires at the next disk op,
			// and what it tears is known only then (how much of the op lands depends on
			// which op it is and, with sector tears, where it crosses a boundary): a
			// moment just after it fired too.
			moms = append(moms, mom{at: at + 1, fault: f.text(faultBrief)})
			at = f.ArmedNS
		}
		moms = append(moms, mom{at: max(at-1, 0)}, mom{at: at + 1, fault: f.text(faultBrief)})
	}
	sort.SliceStable(moms, func(i, j int) bool { return moms[i].at < moms[j].at })
	// Merge duplicates, keeping fault labels.
	var uniq []mom
	for _, m := range moms {
		if n := len(uniq); n > 0 && uniq[n-1].at == m.at {
			if m.fault != "" {
				uniq[n-1].fault = joinNonEmpty(uniq[n-1].fault, m.fault)
			}
			continue
		}
		uniq = append(uniq, m)
	}
	res := &CauseResult{Seed: seed, Failure: orig.Failure, Moments: make([]Moment, len(uniq))}
	type job struct{ m, k int }
	jobs := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	total := len(uniq) * opt.Futures
	done := 0
	for i := range uniq {
		res.Moments[i] = Moment{AtNS: uniq[i].at, Fault: uniq[i].fault}
	}
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				at := uniq[j.m].at
				fs := futureSeed(seed, j.m, j.k)
				ro := RunOptions{Plan: opt.Plan, ReseedAt: max(at, 1), FutureSeed: fs}
				r := run(ctx, seed, ro)
				failed := r.Verdict == VerdictFail && r.Failure != nil && r.Failure.Signature == sig
				mu.Lock()
				res.Moments[j.m].Runs++
				if failed {
					res.Moments[j.m].Fails++
				}
				done++
				if opt.Progress != nil {
					opt.Progress(done, total)
				}
				mu.Unlock()
			}
		}()
	}
	for m := range uniq {
		for k := 0; k < opt.Futures; k++ {
			if ctx.Err() != nil {
				break
			}
			jobs <- job{m, k}
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range res.Moments {
		m := &res.Moments[i]
		if m.Runs > 0 {
			m.P = float64(m.Fails) / float64(m.Runs)
		}
	}
	res.Futures = total
	res.Jump = biggestJump(res.Moments)
	res.WallNS = int64(time.Since(start))
	return res, nil
}

func futureSeed(seed uint64, m, k int) uint64 {
	x := seed*0x9E3779B97F4A7C15 ^ uint64(m)<<32 ^ uint64(k) ^ 0xC0FFEE
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return x
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

func biggestJump(ms []Moment) *Jump {
	var best *Jump
	for i := 1; i < len(ms); i++ {
		d := ms[i].P - ms[i-1].P
		if d <= 0 || (best != nil && d <= best.ToP-best.FromP) {
			continue
		}
		j := &Jump{FromP: ms[i-1].P, ToP: ms[i].P, AtNS: ms[i].AtNS}
		if ms[i].Fault != "" {
			j.Faults = strings.Split(ms[i].Fault, ", ")
		}
		best = j
	}
	if best != nil {
		after := "with no fault in between (scheduling or timing decided it)"
		if len(best.Faults) > 0 {
			after = "after the " + strings.Join(best.Faults, ", ")
		}
		best.Summary = fmt.Sprintf("%.0f%% -> %.0f%% %s", best.FromP*100, best.ToP*100, after)
	}
	return best
}
