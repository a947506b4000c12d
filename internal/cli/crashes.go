package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
	"github.com/seedfall/seedfall/internal/worker"
)

// CrashesSpec is what `seedfall crashes` needs (docs/crashes.md).
type CrashesSpec struct {
	Sim    *engine.Sim
	Config string // the config's path, for replay commands
	// ReplayFlags are appended to every replay command (" -upgrade-from REV").
	ReplayFlags string
	Seed        uint64
	engineapi.CrashStatesOptions
	// RestartNS is how long after each crash the node restarts (0: the config's
	// faults.restart_delay, default 250ms).
	RestartNS int64
	// RecheckNS, when > 0, adds a process kill this long after the restart
	// (engineapi.CrashStatePlan); when < 0, halfway between the restart and the end of the
	// seed's own run (at least a second after the restart); 0: no kill.
	RecheckNS int64
	Workers   int
	// InProc runs the states in this process instead of worker processes.
	InProc bool
	// OutDir receives the plans of failing states (required to print replay commands).
	OutDir string
	// Shrink shrinks the first failing state of each site whose plan has other faults,
	// within this budget per site (0: no shrink).
	Shrink time.Duration
	// Progress receives progress lines with an ETA (nil: quiet).
	Progress io.Writer
	// Executable is the seedfall binary for worker processes (default: this one).
	Executable string
	// Pool runs the states (nil: start one for this call unless InProc).
	Pool *worker.Pool
	// Budget, when > 0, runs at most this many of the distinct states, chosen by
	// budgetStates: every call site's first states before any site's later ones.
	Budget int
}

// CrashesReport is the outcome of `seedfall crashes`.
type CrashesReport struct {
	Config string `json:"config"`
	Seed   uint64 `json:"seed"`
	Node   string `json:"node"`
	// Bound describes the family of states tried at each op.
	Bound string `json:"bound"`
	// NoOwnFaults says the probe ran the seed without its own faults (-own-faults=false),
	// so Baseline is the verdict of the seed's workload without any fault.
	NoOwnFaults bool `json:"no_own_faults,omitempty"`
	// Baseline is the seed's own verdict, without the systematic crash.
	Baseline engine.Verdict `json:"baseline"`
	Ops      int            `json:"ops"`
	// Candidates is the candidate states tried on disk copies; States the distinct
	// ones run; BoundedOps the ops where the bound cut the family short.
	Candidates int `json:"candidates"`
	States     int `json:"states"`
	BoundedOps int `json:"bounded_ops"`
	// Equivalent counts the states not run because an earlier op of the same
	// incarnation left the same durable image with nothing sent in between
	// (CrashStatesOptions.PerOp).
	Equivalent int `json:"equivalent"`
	Failing    int `json:"failing"`
	// Ran is how many states ran; fewer than States when the search was interrupted
	// (Partial: Ctrl-C, a timeout's SIGINT).
	Ran int `json:"ran"`
	// FirstFailing is the position (1-based, in op order) of the first failing state:
	// the runs a search in this order needs to find a vulnerability (0: none).
	FirstFailing int  `json:"first_failing,omitempty"`
	Partial      bool `json:"partial,omitempty"`
	// Retimed counts states whose run ended before the default recheck crash, or went on
	// long after it, and were run again with the recheck halfway to that run's end.
	Retimed int `json:"retimed"`
	// Budget is the budget the search ran under (CrashesSpec.Budget; 0: none), and
	// OverBudget the distinct states it left out. States counts them; Ran does not.
	Budget     int `json:"budget,omitempty"`
	OverBudget int `json:"over_budget,omitempty"`
	// Errors counts states the tool could not run (not vulnerabilities).
	Errors int     `json:"errors"`
	Sites  []Site  `json:"sites"`
	Secs   float64 `json:"seconds"`
}

// Site is one call site (the file:line of the disk op the crash came before) with the
// states there that failed the workload's checks.
type Site struct {
	Site string `json:"site"`
	// Ops are the disk ops at the site, "N/I": op N of the node's incarnation I.
	Ops     []string `json:"ops"`
	States  int      `json:"states"`  // states run at this site
	Failing int      `json:"failing"` // of them, failed
	// First is the first failing state: its op and incarnation, kind, reason and plan.
	Op          int64  `json:"op"`
	Incarnation int    `json:"incarnation"`
	Kind        string `json:"kind"`
	Reason      string `json:"reason"`
	Plan        string `json:"plan"`
	Replay      string `json:"replay"`
	Shrunk      string `json:"shrunk,omitempty"`
	Signature   string `json:"signature,omitempty"`
	// Failures are the site's distinct failures (by signature, else reason), the first
	// one's above included, each with its count and first state: one failure at a site
	// can hide another (nutsdb's finding 8 behind 7).
	Failures []SiteFailure `json:"failures,omitempty"`
}

// SiteFailure is one distinct failure at a site: how many states fail with it, and the
// first of them.
type SiteFailure struct {
	key         string // failureKey
	Signature   string `json:"signature,omitempty"`
	Reason      string `json:"reason"`
	States      int    `json:"states"`
	Op          int64  `json:"op"`
	Incarnation int    `json:"incarnation"`
	Kind        string `json:"kind"`
	Plan        string `json:"plan,omitempty"`
	Replay      string `json:"replay,omitempty"`
}

// failureKey is what makes two failures at a site the same one.
func failureKey(r *engine.Result) string {
	if r.Failure == nil {
		return string(r.Verdict)
	}
	if r.Failure.Signature != "" {
		return r.Failure.Signature
	}
	return r.Failure.Reason
}

// CrashBound describes the candidate family for the report (docs/crashes.md).
func CrashBound(maxStates int) string {
	if maxStates <= 0 {
		maxStates = engine.DefaultMaxStates
	}
	return fmt.Sprintf("per disk op, at most %d distinct durable images of at most %d candidates: every subset of the pending ops when there are at most %d, else the in-order prefixes, the single omissions and the single reorderings; each prefix with its next write torn at up to 3 tear points",
		maxStates, 8*maxStates, engine.ExhaustivePending)
}

// SiteOf is the call site of a disk op as the trace names it ("write /d/f @0+5 at
// kv/log.go:42" -> "kv/log.go:42"), or the op's kind and path when it has no location.
func SiteOf(where string) string {
	if i := strings.LastIndex(where, " at "); i >= 0 {
		return where[i+4:]
	}
	f := strings.Fields(where)
	if len(f) >= 2 {
		return f[0] + " " + f[1]
	}
	return where
}

type crashJob struct {
	pt   engineapi.CrashPoint
	st   engineapi.CrashState
	plan *engine.FaultPlan
	res  *engine.Result
	// retimed: the first run ended before the recheck crash, so the plan is the one
	// with the recheck moved earlier (retimeRecheck).
	retimed bool
}

// retimeRecheck returns the job's plan with its recheck crash moved to halfway between
// the restart and the end of res, when res is the plan's run, it passed, and that point
// is not where the recheck was (nil otherwise). The default recheck is timed from the
// seed's own run. That run is often longer than the plan's, which keeps only the faults
// before the crash point: without a move, the recheck of such a state never happens,
// and a recovery bug that loses data only at the next crash goes unseen. And a crash can
// make the workload's run much longer than the seed's (it retries, it creates again
// what the crash lost): a recheck timed from the seed's run then comes before the
// workload has done so, and a loss that a crash after it causes goes unseen too (NATS's
// finding 13: the client re-creates the stream seconds after the restart). So a plan
// whose run passed is run again with the recheck halfway to that run's end when that is
// earlier than the recheck (its run ended first) or more than a second later. Only the
// default recheck (recheckNS < 0) is moved.
func retimeRecheck(seed uint64, j *crashJob, res *engine.Result, restart, recheckNS int64) *engine.FaultPlan {
	if recheckNS >= 0 || res == nil || (res.Verdict != engine.VerdictPass && res.Verdict != engine.VerdictHorizon) || len(j.plan.Faults) == 0 {
		return nil
	}
	last := j.plan.Faults[len(j.plan.Faults)-1]
	if last.DiskOp != 0 {
		return nil // no recheck
	}
	half := (res.EndNS - j.pt.AtNS - restart) / 2
	if half <= 0 {
		return nil // the run ended before the restart: nothing to recheck
	}
	at := j.pt.AtNS + restart + half
	if res.EndNS >= last.AtNS && at <= last.AtNS+int64(time.Second) {
		return nil // the run reached the recheck, and its own halfway point is not much later
	}
	return engineapi.CrashStatePlan(seed, j.pt, j.st, restart, half)
}

// RunCrashes probes the seed, runs every distinct crash state and groups the failing
// ones by call site.
func RunCrashes(ctx context.Context, sp CrashesSpec) (*CrashesReport, error) {
	start := time.Now()
	cfg := sp.Sim.Config()
	restart := sp.RestartNS
	if restart <= 0 {
		restart = int64(cfg.Faults.RestartDelay)
	}
	if restart <= 0 {
		restart = int64(250 * time.Millisecond)
	}
	points, base, err := engineapi.CrashPoints(ctx, sp.Sim, sp.Seed, sp.CrashStatesOptions)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	node := sp.Node
	if len(points) > 0 {
		node = points[0].Node
	} else if node == "" && len(cfg.Nodes) > 0 {
		node = cfg.Nodes[0].Name
	}
	rep := &CrashesReport{Config: sp.Config, Seed: sp.Seed, Node: node, Bound: CrashBound(sp.MaxStates),
		NoOwnFaults: sp.NoOwnFaults, Baseline: base.Verdict, Ops: len(points), Sites: []Site{}}
	var jobs []*crashJob
	for _, pt := range points {
		rep.Candidates += pt.Candidates
		rep.Equivalent += pt.Equivalent
		if pt.Bounded {
			rep.BoundedOps++
		}
		for _, st := range pt.States {
			recheck := sp.RecheckNS
			if recheck < 0 {
				recheck = max(int64(time.Second), (base.EndNS-pt.AtNS-restart)/2)
			}
			jobs = append(jobs, &crashJob{pt: pt, st: st, plan: engineapi.CrashStatePlan(sp.Seed, pt, st, restart, recheck)})
		}
	}
	rep.States = len(jobs)
	if sp.Budget > 0 && len(jobs) > sp.Budget {
		rep.Budget, rep.OverBudget = sp.Budget, len(jobs)-sp.Budget
		jobs = budgetStates(jobs, sp.Budget)
	}
	if sp.OutDir != "" {
		// Every crash point and its states, for whoever wants to replay one that passed.
		data, _ := json.MarshalIndent(points, "", " ")
		if err := os.WriteFile(filepath.Join(sp.OutDir, fmt.Sprintf("seed-%d.points.json", sp.Seed)), append(data, '\n'), 0o644); err != nil {
			return nil, fmt.Errorf("write crash points: %w", err)
		}
	}
	if sp.Progress != nil {
		fmt.Fprintf(sp.Progress, "crashes: seed %d, node %s: %d disk ops, %d candidate states, %d distinct (%d ops bounded, %d equivalent to an earlier op's); baseline %s\n",
			sp.Seed, node, len(points), rep.Candidates, rep.States, rep.BoundedOps, rep.Equivalent, base.Verdict)
		if rep.Budget > 0 {
			fmt.Fprintf(sp.Progress, "crashes: budget %d states: %d left out (each call site's first states run first)\n", rep.Budget, rep.OverBudget)
		}
	}

	run := sp.Sim.Run
	workers := sp.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if sp.Pool != nil {
		run = sp.Pool.Run
	} else if !sp.InProc {
		pool, err := NewPool(sp.Sim, workers, sp.Executable)
		if err != nil {
			return nil, err
		}
		defer pool.Close()
		run = pool.Run
	}
	var mu sync.Mutex
	done, failed := 0, 0
	lastPrint := time.Time{}
	next := make(chan *crashJob)
	var wg sync.WaitGroup
	for range min(workers, max(len(jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				res := run(ctx, sp.Seed, engine.RunOptions{Plan: j.plan})
				if plan := retimeRecheck(sp.Seed, j, res, restart, sp.RecheckNS); plan != nil && ctx.Err() == nil {
					// The plan's run ended before its recheck crash: run it again with the
					// recheck halfway to that end. Up to then it is the same run.
					j.plan, j.retimed = plan, true
					res = run(ctx, sp.Seed, engine.RunOptions{Plan: j.plan})
				}
				mu.Lock()
				j.res = res
				if canceled(ctx, res) {
					// Cut short by the interrupt: neither done nor failed (not reported).
					mu.Unlock()
					continue
				}
				done++
				if j.res.Failed() {
					failed++
				}
				if sp.Progress != nil && (time.Since(lastPrint) > 10*time.Second || done == len(jobs)) {
					lastPrint = time.Now()
					fmt.Fprintf(sp.Progress, "crashes: %s\n", progressLine(done, failed, len(jobs), time.Since(start)))
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	// Interrupted: report the states that ran (Partial), not those cut short.
	if ctx.Err() != nil {
		rep.Partial = true
		kept := jobs[:0]
		for _, j := range jobs {
			if j.res != nil && !canceled(ctx, j.res) {
				kept = append(kept, j)
			}
		}
		jobs = kept
	}

	sites := map[string]*Site{}
	for i, j := range jobs {
		name := SiteOf(j.pt.Where)
		s := sites[name]
		if s == nil {
			s = &Site{Site: name}
			sites[name] = s
		}
		if op := fmt.Sprintf("%d/%d", j.pt.DiskOp, j.pt.Incarnation); !slices.Contains(s.Ops, op) {
			s.Ops = append(s.Ops, op)
		}
		s.States++
		r := j.res
		rep.Ran++
		if j.retimed {
			rep.Retimed++
		}
		if r.Verdict == engine.VerdictError || r.Verdict == engine.VerdictWatchdog {
			rep.Errors++
			continue
		}
		if !r.Failed() {
			continue
		}
		rep.Failing++
		if rep.FirstFailing == 0 {
			rep.FirstFailing = i + 1
		}
		s.Failing++
		key := failureKey(r)
		if k := slices.IndexFunc(s.Failures, func(f SiteFailure) bool { return f.key == key }); k >= 0 {
			s.Failures[k].States++
			continue
		}
		f := SiteFailure{key: key, States: 1, Op: j.pt.DiskOp, Incarnation: j.pt.Incarnation, Kind: j.st.Kind}
		if r.Failure != nil {
			f.Reason, f.Signature = r.Failure.Reason, r.Failure.Signature
		}
		if sp.OutDir != "" {
			f.Plan = filepath.Join(sp.OutDir, fmt.Sprintf("seed-%d.inc-%d.op-%d.state-%d.faults.json", sp.Seed, j.pt.Incarnation, j.pt.DiskOp, i))
			if err := SavePlan(f.Plan, j.plan); err != nil {
				return nil, fmt.Errorf("save plan: %w", err)
			}
			f.Replay = ReplayCommand(sp.Config, sp.Seed, "-faults "+f.Plan+sp.ReplayFlags)
		}
		s.Failures = append(s.Failures, f)
		if s.Failing > 1 {
			continue
		}
		// The site's first failure is its first distinct one.
		s.Op, s.Incarnation, s.Kind, s.Reason, s.Signature, s.Plan, s.Replay = f.Op, f.Incarnation, f.Kind, f.Reason, f.Signature, f.Plan, f.Replay
		if sp.OutDir != "" {
			if sp.Shrink > 0 && len(j.plan.Faults) > 1 {
				sr, err := sp.Sim.Shrink(ctx, sp.Seed, engine.ShrinkOptions{Plan: j.plan, Workers: workers, Budget: sp.Shrink, Run: run})
				if err == nil && sr != nil && sr.Plan != nil && len(sr.Plan.Faults) < len(j.plan.Faults) {
					s.Shrunk = strings.TrimSuffix(s.Plan, ".faults.json") + ".shrunk.faults.json"
					if err := SavePlan(s.Shrunk, sr.Plan); err != nil {
						return nil, fmt.Errorf("save plan: %w", err)
					}
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sites)) {
		rep.Sites = append(rep.Sites, *sites[name])
	}
	// Failing sites first, most failing states first; then by name.
	slices.SortStableFunc(rep.Sites, func(a, b Site) int { return b.Failing - a.Failing })
	rep.Secs = time.Since(start).Seconds()
	return rep, nil
}

// budgetStates picks n of the jobs (in op order) for a search with a budget: round
// after round, each call site in the order of its first op gives its next state, so
// every site's first states run before any site's later ones. A budget spent in op
// order would only ever reach the start of the run, where a server opens its files; the
// sites of its requests, compactions and rotations come later. Within a site the ops
// come in spreadOrder (its first op, its last, then the middle ones halving the gaps),
// each op with all its states: the run's start and its end (a recovery, a final drain)
// are where a site's behaviour changes most, and the ops between differ by what the
// files hold (a record that straddles a sector, a segment that is full), which a spread
// reaches sooner than a prefix. The picked jobs keep their op order. The choice depends
// only on the probe, so a search is the same on any machine.
func budgetStates(jobs []*crashJob, n int) []*crashJob {
	if n >= len(jobs) {
		return jobs
	}
	type op struct {
		site   string
		inc, n int64
	}
	var order []string
	siteOps := map[string][]op{}
	opJobs := map[op][]int{}
	for i, j := range jobs {
		s := SiteOf(j.pt.Where)
		if _, ok := siteOps[s]; !ok {
			order = append(order, s)
		}
		o := op{s, int64(j.pt.Incarnation), j.pt.DiskOp}
		if _, ok := opJobs[o]; !ok {
			siteOps[s] = append(siteOps[s], o)
		}
		opJobs[o] = append(opJobs[o], i)
	}
	bySite := map[string][]int{}
	for _, s := range order {
		ops := siteOps[s]
		for _, k := range spreadOrder(len(ops)) {
			bySite[s] = append(bySite[s], opJobs[ops[k]]...)
		}
	}
	picked := make([]bool, len(jobs))
	for round, left := 0, n; left > 0; round++ {
		for _, s := range order {
			if idx := bySite[s]; round < len(idx) && left > 0 {
				picked[idx[round]] = true
				left--
			}
		}
	}
	out := make([]*crashJob, 0, n)
	for i, j := range jobs {
		if picked[i] {
			out = append(out, j)
		}
	}
	return out
}

// spreadOrder orders 0..n-1 as first, last, then the middle of each gap, widest first
// (0, 8, 4, 2, 6, 1, 3, 5, 7 for n = 9): every prefix of it is spread over the range.
func spreadOrder(n int) []int {
	if n <= 0 {
		return nil
	}
	out := []int{0}
	if n > 1 {
		out = append(out, n-1)
	}
	type gap struct{ lo, hi int } // the indexes strictly between lo and hi are left
	gaps := []gap{{0, n - 1}}
	for len(gaps) > 0 {
		var next []gap
		for _, g := range gaps {
			if g.hi-g.lo < 2 {
				continue
			}
			m := (g.lo + g.hi) / 2
			out = append(out, m)
			next = append(next, gap{g.lo, m}, gap{m, g.hi})
		}
		gaps = next
	}
	return out
}

// progressLine is "120/400 states, 3 failing, 2.1 states/s, ETA 2m13s".
func progressLine(done, failed, total int, el time.Duration) string {
	return strings.Replace(strings.Replace(ProgressLine(done, failed, total, el), "seeds,", "states,", 1), "seeds/s", "states/s", 1)
}
