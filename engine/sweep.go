package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

// PropertySummary aggregates one property across a sweep.
type PropertySummary struct {
	Name         string       `json:"name"`
	Kind         PropertyKind `json:"kind"`
	SeedsReached int          `json:"seeds_reached"`
	SeedsTrue    int          `json:"seeds_true"`
	// OK is the sweep verdict: always/unreachable never violated, sometimes true on at
	// least one seed, reachable reached on at least one seed.
	OK bool `json:"ok"`
}

// AggregateProperties counts, per property, the seeds where it was reached and where it
// held, sorted by name.
func AggregateProperties(results []*Result) []PropertySummary {
	m := map[string]*PropertySummary{}
	for _, r := range results {
		for _, p := range r.Properties {
			ps := m[p.Name]
			if ps == nil {
				ps = &PropertySummary{Name: p.Name, Kind: p.Kind}
				m[p.Name] = ps
			}
			if p.Reached {
				ps.SeedsReached++
			}
			if p.Reached && p.Held {
				ps.SeedsTrue++
			}
		}
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]PropertySummary, 0, len(names))
	for _, k := range names {
		ps := m[k]
		switch ps.Kind {
		case PropAlways:
			ps.OK = ps.SeedsTrue == ps.SeedsReached
		case PropUnreachable:
			ps.OK = ps.SeedsReached == 0
		case PropSometimes:
			ps.OK = ps.SeedsTrue > 0
		case PropReachable:
			ps.OK = ps.SeedsReached > 0
		}
		out = append(out, *ps)
	}
	return out
}

// IsolatedOptions tune SweepIsolated and NewPool.
type IsolatedOptions struct {
	Workers int
	// Command makes the command line of one worker process; the worker reads seed
	// requests (one per line) on stdin and writes one JSON Result per line on stdout (see
	// ServeWorker).
	Command func() *exec.Cmd
	// Grace is added to the longest a run may take (10 watchdog budgets, see the world's
	// monitor) before a worker that stopped answering is killed (default 2s, or
	// $SEEDFALL_WATCHDOG_GRACE).
	Grace time.Duration
	// OnResult is called for each result as it completes, serialized.
	OnResult func(*Result)
}

// SeedRequest is one line of the worker protocol: a seed and how to run it.
type SeedRequest struct {
	Seed     uint64 `json:"seed"`
	Mutation string `json:"mutation,omitempty"`
	Check    bool   `json:"check,omitempty"`
}

// Pool is a set of worker processes that stay up across sweeps, so that many short
// sweeps (mutate, shrink batches) pay the start-up of a worker once.
type Pool struct {
	cfg   *Config
	opt   IsolatedOptions
	limit time.Duration
	idle  chan *worker
	mu    sync.Mutex
}

// NewPool makes a pool; workers start on first use.
func NewPool(cfg *Config, opt IsolatedOptions) *Pool {
	grace := opt.Grace
	if grace == 0 {
		grace = 2 * time.Second
		if d, err := time.ParseDuration(os.Getenv("SEEDFALL_WATCHDOG_GRACE")); err == nil {
			grace = d
		}
	}
	opt.Workers = max(1, opt.Workers)
	return &Pool{cfg: cfg, opt: opt, limit: runCapFactor*time.Duration(cfg.Watchdog) + grace, idle: make(chan *worker, opt.Workers)}
}

// Close stops the idle workers.
func (p *Pool) Close() {
	for {
		select {
		case wk := <-p.idle:
			wk.stop()
		default:
			return
		}
	}
}

// SweepIsolated runs seeds in worker processes, so a guest that spins without host calls
// (which cannot be preempted cheaply inside one process) costs one killed worker and a
// counted "watchdog" outcome, never a hung sweep. Results come back in seed order.
func SweepIsolated(ctx context.Context, cfg *Config, seeds []uint64, opt IsolatedOptions) ([]*Result, error) {
	p := NewPool(cfg, opt)
	defer p.Close()
	return p.Sweep(ctx, seeds, SeedRequest{}, opt.OnResult)
}

// Sweep runs seeds with the options of tmpl (its Seed is ignored).
func (p *Pool) Sweep(ctx context.Context, seeds []uint64, tmpl SeedRequest, onResult func(*Result)) ([]*Result, error) {
	next := make(chan uint64)
	results := make([]*Result, 0, len(seeds))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < min(p.opt.Workers, len(seeds)); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var wk *worker
			select {
			case wk = <-p.idle:
			default:
			}
			defer func() {
				if wk != nil {
					p.idle <- wk
				}
			}()
			for seed := range next {
				var r *Result
				r, wk = p.runSeed(ctx, wk, tmpl, seed)
				if r == nil { // canceled
					continue
				}
				mu.Lock()
				results = append(results, r)
				if onResult != nil {
					onResult(r)
				}
				mu.Unlock()
			}
		}()
	}
	for _, s := range seeds {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- s:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].Seed < results[j].Seed })
	if ctx.Err() == nil && len(results) > 0 && allStartFailures(results) {
		return nil, errors.New(results[0].Error)
	}
	return results, ctx.Err()
}

// startFailure prefixes the reason of a seed that no worker process could be started for.
const startFailure = "could not start a worker process: "

func allStartFailures(rs []*Result) bool {
	for _, r := range rs {
		if r.Verdict != VerdictError || !strings.HasPrefix(r.Error, startFailure) {
			return false
		}
	}
	return true
}

// runSeed runs one seed on wk (starting a worker when wk is nil) and returns its result
// and the worker to use next (nil when it had to be stopped). No seed is ever dropped: a
// worker that dies without an answer for a reason other than the watchdog (it may have
// been exiting already, after an earlier seed's watchdog) is replaced and the seed tried
// once more on a fresh worker, and a worker that fails to start is started once more;
// only then is the seed's outcome an error, counted like any other. A nil result means
// ctx was canceled.
func (p *Pool) runSeed(ctx context.Context, wk *worker, tmpl SeedRequest, seed uint64) (*Result, *worker) {
	req := tmpl
	req.Seed = seed
	var r *Result
	for try := 0; try < 2; try++ {
		if wk == nil {
			var err error
			if wk, err = startWorker(p.opt.Command()); err != nil {
				if wk, err = startWorker(p.opt.Command()); err != nil {
					return errorResult(seed, VerdictError, fmt.Sprintf("%s%v", startFailure, err)), nil
				}
			}
		}
		limit := p.limit
		if req.Check { // two runs
			limit += runCapFactor * time.Duration(p.cfg.Watchdog)
		}
		res, err := wk.run(ctx, req, limit)
		if err == nil {
			return res, wk
		}
		wk.stop()
		tail := wk.stderrTail()
		wk = nil
		if ctx.Err() != nil {
			return nil, nil
		}
		if strings.Contains(err.Error(), "timeout") {
			// The watchdog: the guest spun; running it again would spin again.
			return errorResult(seed, VerdictWatchdog, fmt.Sprintf("seed %d: worker stopped after %s without an answer (a guest spinning without host calls?)", seed, limit)), nil
		}
		r = errorResult(seed, VerdictError, fmt.Sprintf("seed %d: worker process failed: %v%s", seed, err, tail))
	}
	return r, nil
}

func errorResult(seed uint64, v Verdict, reason string) *Result {
	r := &Result{Seed: seed, Verdict: v, Faults: []Fault{}}
	if v == VerdictError {
		r.Error = reason
	}
	r.Failure = &Failure{Kind: string(v), Reason: reason}
	r.Failure.Signature = Signature(r)
	return r
}

// startAllowance is added to a fresh worker's first limit: it loads and compiles the
// modules (from the compilation cache) before it can answer.
const startAllowance = 60 * time.Second
