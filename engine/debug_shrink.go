package engine

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ShrinkOptions tune Shrink.
type ShrinkOptions struct {
	// Plan is the failing run's plan; nil means the seed's own generated plan.
	Plan *FaultPlan
	// Workers run candidate plans in parallel (default 2).
	Workers int
	// Budget bounds the wall time; the best plan so far is returned when it runs out.
	Budget time.Duration
	// Progress is called after each batch of runs.
	Progress func(runs, faults int)
	// Run runs each seed (default: the Sim's own Run, in this process); a worker pool's
	// Run (internal/worker) runs them in worker processes.
	Run func(ctx context.Context, seed uint64, opt RunOptions) *Result
	// KeepSwarm keeps the run's swarm draw as it is: shrink then turns no kind off, so
	// the minimal faults replay under the original draw (for callers that keep only the
	// faults, such as the Action's baseline).
	KeepSwarm bool
}

// ShrinkResult is a minimal fault plan that still produces the original failure.
type ShrinkResult struct {
	Seed      uint64     `json:"seed"`
	Signature string     `json:"signature"`
	Original  *Result    `json:"original"`
	Minimal   *Result    `json:"minimal"`
	Plan      *FaultPlan `json:"plan"`
	Before    int        `json:"faults_before"`
	After     int        `json:"faults_after"`
	Runs      int        `json:"runs"`
	Exhausted bool       `json:"budget_exhausted,omitempty"`
	// KindsOff are the fault kinds shrink turned off in the run's swarm draw.
	KindsOff []FaultKind `json:"swarm_kinds_off,omitempty"`
	// Replays is true when the minimal plan was run twice more with identical traces.
	Replays bool  `json:"replays_exactly"`
	WallNS  int64 `json:"wall_ns"`
}

// Shrink reduces a failing seed's faults with delta debugging (ddmin) while the failure
// keeps its signature, turns off the kinds of a swarm draw that the failure does not
// need (unless KeepSwarm), then simplifies what remains (idle instead of mid-op crashes,
// shorter partitions and pauses). The result's plan replays exactly with RunOptions.Plan.
func (s *Sim) Shrink(ctx context.Context, seed uint64, opt ShrinkOptions) (*ShrinkResult, error) {
	start := time.Now()
	workers := opt.Workers
	if workers <= 0 {
		workers = 2
	}
	run := opt.Run
	if run == nil {
		run = s.Run
	}
	orig := run(ctx, seed, RunOptions{Plan: opt.Plan})
	if orig.Failure == nil || orig.Verdict != VerdictFail {
		return nil, fmt.Errorf("seed %d does not fail (%s): nothing to shrink", seed, orig.Verdict)
	}
	sig := orig.Failure.Signature
	res := &ShrinkResult{Seed: seed, Signature: sig, Original: orig, Before: len(orig.Faults), Runs: 1}
	deadline := time.Time{}
	if opt.Budget > 0 {
		deadline = start.Add(opt.Budget)
	}
	var mu sync.Mutex
	best := map[int]*Result{} // candidate index -> result, per batch
	// sw is the swarm draw the candidates run under (swarm.go): the original run's, until
	// shrink turns a kind off.
	sw := orig.Swarm
	// The workload's directed faults stay in every candidate, in their places: shrink
	// works on the random ones (directed.go).
	var directed, random []placed
	for i, f := range orig.Faults {
		if f.Directed {
			directed = append(directed, placed{f, i})
		} else {
			random = append(random, placed{f, i})
		}
	}
	try := func(cands [][]placed, sw SwarmDraw) []bool {
		ok := make([]bool, len(cands))
		sem := make(chan struct{}, workers)
		var wg sync.WaitGroup
		for i, c := range cands {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int, c []placed) {
				defer wg.Done()
				defer func() { <-sem }()
				r := run(ctx, seed, RunOptions{Plan: &FaultPlan{Seed: seed, Faults: renumber(merge(directed, c)), Swarm: sw}})
				good := r.Verdict == VerdictFail && r.Failure != nil && r.Failure.Signature == sig
				mu.Lock()
				res.Runs++
				if good {
					best[i] = r
				}
				mu.Unlock()
				ok[i] = good
			}(i, c)
		}
		wg.Wait()
		if opt.Progress != nil {
			opt.Progress(res.Runs, -1)
		}
		return ok
	}
	outOfBudget := func() bool {
		return ctx.Err() != nil || (!deadline.IsZero() && time.Now().After(deadline))
	}
	cur := random
	// The recorded plan must reproduce the failure; if it does not, replay is broken.
	if ok := try([][]placed{cur}, sw); !ok[0] {
		return nil, fmt.Errorf("seed %d: replaying the recorded %d faults does not reproduce the failure (a determinism bug: run with -check)", seed, len(orig.Faults))
	}
	// ddmin: try removing chunks (complements), refining granularity.
	n := 2
	for len(cur) >= 2 && !outOfBudget() {
		chunks := split(cur, n)
		var cands [][]placed
		for i := range chunks {
			cands = append(cands, without(chunks, i))
		}
		// Also try each chunk alone when n is small (finds 1-fault failures fast).
		if n <= 4 {
			cands = append(cands, chunks...)
		}
		ok := try(cands, sw)
		reduced := false
		for i, good := range ok {
			if good {
				cur = cands[i]
				if i < len(chunks) {
					n = max(n-1, 2)
				} else {
					n = 2
				}
				reduced = true
				break
			}
		}
		if !reduced {
			if n >= len(cur) {
				break
			}
			n = min(len(cur), 2*n)
		}
	}
	if len(cur) == 1 && !outOfBudget() {
		if ok := try([][]placed{{}}, sw); ok[0] {
			cur = nil
		}
	}
	// Under swarm, turn off each kind that is on, with its faults: a kind the failure
	// does not need (its remaining faults, or its per-op draws such as fsync_eio) goes.
	for _, kind := range sw.onKinds() {
		if opt.KeepSwarm || outOfBudget() {
			break
		}
		off, _ := sw.off(kind)
		var cand []placed
		for _, f := range cur {
			if f.Kind != kind {
				cand = append(cand, f)
			}
		}
		if ok := try([][]placed{cand}, off); ok[0] {
			cur, sw = cand, off
			res.KindsOff = append(res.KindsOff, kind)
		}
	}
	// Simplify each remaining fault.
	for i := 0; i < len(cur) && !outOfBudget(); i++ {
		for _, simpler := range simplifications(cur[i].Fault) {
			cand := append([]placed(nil), cur...)
			cand[i].Fault = simpler
			if ok := try([][]placed{cand}, sw); ok[0] {
				cur = cand
			}
		}
	}
	res.Exhausted = outOfBudget()

	// The minimal plan, run for its recorded faults (times and ops as they fired). A
	// crash armed by time in the original run keeps that time as the key of its
	// tearing, but it is no time of the minimal plan's run (where the crash fires
	// earlier or later): it moves to StreamNS, which keys the same stream, so that the
	// tearing is the same and cause reads no stale arming time.
	minimal := renumber(merge(directed, cur))
	if plain := withoutArmed(minimal); plain != nil {
		minimal = plain
	}
	final := run(ctx, seed, RunOptions{Plan: &FaultPlan{Seed: seed, Faults: minimal, Swarm: sw}, Trace: true})
	res.Runs++
	if final.Verdict != VerdictFail || final.Failure == nil || final.Failure.Signature != sig {
		return nil, fmt.Errorf("seed %d: the minimal plan stopped reproducing the failure (a determinism bug)", seed)
	}
	res.Plan = &FaultPlan{Seed: seed, Faults: final.Faults, Swarm: final.Swarm}
	again := run(ctx, seed, RunOptions{Plan: res.Plan})
	res.Runs++
	res.Replays = again.TraceHash == final.TraceHash
	res.Minimal = final
	res.After = len(final.Faults)
	res.WallNS = int64(time.Since(start))
	return res, nil
}

// withoutArmed returns fs with every ArmedNS moved to StreamNS (where that is not set
// already) and the ops a spread crash let pass after it dropped, or nil when no fault
// has an ArmedNS.
func withoutArmed(fs []Fault) []Fault {
	var out []Fault
	for i, f := range fs {
		if f.ArmedNS != 0 {
			if out == nil {
				out = append([]Fault(nil), fs...)
			}
			if f.StreamNS == 0 {
				out[i].StreamNS = f.ArmedNS
			}
			out[i].ArmedNS = 0
			if f.DiskOp > 0 {
				out[i].SkipOps = 0 // the arming it counted from is gone
			}
		}
	}
	return out
}

// simplifications proposes simpler variants of one fault, simplest first.
func simplifications(f Fault) []Fault {
	if s := specOf(f.Kind); s != nil && s.simplify != nil {
		return s.simplify(f)
	}
	return nil
}

// placed is a fault with its place in the run's plan, so that the random faults shrink
// keeps go back between the directed ones in their order.
type placed struct {
	Fault
	at int
}

// merge is a and b, each in plan order, as one plan.
func merge(a, b []placed) []Fault {
	out := make([]Fault, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if len(b) == 0 || len(a) > 0 && a[0].at < b[0].at {
			out, a = append(out, a[0].Fault), a[1:]
		} else {
			out, b = append(out, b[0].Fault), b[1:]
		}
	}
	return out
}

func split[T any](fs []T, n int) [][]T {
	var out [][]T
	size := (len(fs) + n - 1) / n
	for i := 0; i < len(fs); i += size {
		out = append(out, fs[i:min(i+size, len(fs))])
	}
	return out
}

func without[T any](chunks [][]T, skip int) []T {
	var out []T
	for i, c := range chunks {
		if i != skip {
			out = append(out, c...)
		}
	}
	return out
}

// renumber fixes the incarnation of each fault pinned to a disk op after faults were
// dropped: a node's k-th life comes after k-1 crashes or kills that restart it, so
// without an earlier crash "disk op #55 of server#2" becomes "disk op #55 of server#1".
func renumber(fs []Fault) []Fault {
	out := make([]Fault, len(fs))
	crashes := map[string]int{}
	for i, f := range fs {
		if f.isPinned() {
			f.Incarnation = crashes[f.Node] + 1
		}
		if s := specOf(f.Kind); s != nil && s.restarts != nil && s.restarts(f) {
			crashes[f.Node]++
		}
		out[i] = f
	}
	return out
}
