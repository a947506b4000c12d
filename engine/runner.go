package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// RunFunc runs one seed; Sim.Run is one, Runner.Run another. Shrink and Cause take one
// so that their runs can happen in worker processes.
type RunFunc func(ctx context.Context, seed uint64, opt RunOptions) *Result

// RunRequest is one line of the run-worker protocol (ServeRuns): a seed and every
// option of RunOptions that can cross a process boundary (not TraceHook).
type RunRequest struct {
	Seed       uint64     `json:"seed"`
	Plan       *FaultPlan `json:"plan,omitempty"`
	Trace      bool       `json:"trace,omitempty"`
	Mutation   string     `json:"mutation,omitempty"`
	Check      bool       `json:"check,omitempty"`
	ReseedAt   int64      `json:"reseed_at,omitempty"`
	FutureSeed uint64     `json:"future_seed,omitempty"`
	OutDir     string     `json:"outdir,omitempty"`
}

func (q RunRequest) options() RunOptions {
	return RunOptions{Plan: q.Plan, Trace: q.Trace, Mutation: q.Mutation, Check: q.Check,
		ReseedAt: q.ReseedAt, FutureSeed: q.FutureSeed, OutDir: q.OutDir}
}

// ServeRuns is the worker side of Runner: it reads RunRequests (one JSON object a line)
// from in and writes one JSON Result a line to out, until in closes. After a run the
// watchdog stopped it returns an error: the stuck guest's goroutine still spins (it
// cannot be reclaimed, and it would stall the next garbage collection), so the process
// is spent and must exit.
func ServeRuns(ctx context.Context, s *Sim, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	for sc.Scan() {
		var req RunRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("run worker: bad request %q: %v", sc.Text(), err)
		}
		r := s.Run(ctx, req.Seed, req.options())
		if err := enc.Encode(r); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if r.Verdict == VerdictWatchdog {
			return fmt.Errorf("run worker: watchdog fired on seed %d; exiting", req.Seed)
		}
	}
	return sc.Err()
}

// Runner runs single seeds, with any RunOptions, in worker processes (ServeRuns), at
// most Workers at a time. A guest that spins without host calls then costs a worker
// process, which exits or is killed, and never leaks its instance or goroutine into the
// caller: the way for long-lived processes (the MCP server) to replay, shrink and
// explain failures.
type Runner struct {
	opt   IsolatedOptions
	limit time.Duration
	slots chan struct{}
	mu    sync.Mutex
	idle  []*worker
	done  bool
}

// NewRunner makes a Runner for cfg; opt.Command makes a worker's command line (a process
// that serves ServeRuns on its stdin and stdout). Workers start on first use and stay
// up until Close.
func NewRunner(cfg *Config, opt IsolatedOptions) *Runner {
	grace := opt.Grace
	if grace == 0 {
		grace = 10 * time.Second
		if d, err := time.ParseDuration(os.Getenv("SEEDFALL_WATCHDOG_GRACE")); err == nil {
			grace = d
		}
	}
	opt.Workers = max(1, opt.Workers)
	return &Runner{opt: opt, limit: runCapFactor*time.Duration(cfg.Watchdog) + grace,
		slots: make(chan struct{}, opt.Workers)}
}

// Run runs one seed in a worker process. A worker that dies, or does not answer within
// the config's watchdog plus the grace, is killed and the seed counts as watchdog (or
// error); when ctx is done the worker is killed and the result is a canceled error, as
// Sim.Run reports it.
func (rn *Runner) Run(ctx context.Context, seed uint64, opt RunOptions) *Result {
	canceled := func() *Result {
		return &Result{Seed: seed, Verdict: VerdictError, Faults: []Fault{}, Error: "run canceled: " + ctx.Err().Error(),
			Failure: &Failure{Kind: "canceled", Reason: "run canceled: " + ctx.Err().Error()}}
	}
	select {
	case rn.slots <- struct{}{}:
	case <-ctx.Done():
		return canceled()
	}
	defer func() { <-rn.slots }()
	wk, err := rn.get()
	if err != nil {
		return rn.failed(seed, VerdictError, err.Error())
	}
	req := RunRequest{Seed: seed, Plan: opt.Plan, Trace: opt.Trace, Mutation: opt.Mutation, Check: opt.Check,
		ReseedAt: opt.ReseedAt, FutureSeed: opt.FutureSeed, OutDir: opt.OutDir}
	r, err := wk.run(ctx, req, rn.limit)
	switch {
	case err == nil && r.Verdict != VerdictWatchdog:
		rn.put(wk)
		return r
	case err == nil:
		// The worker exits after a watchdog: make sure of it.
		rn.drop(wk)
		return r
	}
	rn.drop(wk)
	if ctx.Err() != nil {
		return canceled()
	}
	if strings.Contains(err.Error(), "timeout") {
		return rn.failed(seed, VerdictWatchdog, fmt.Sprintf("seed %d: worker stopped after %s without an answer (a guest spinning without host calls?)", seed, rn.limit))
	}
	return rn.failed(seed, VerdictError, fmt.Sprintf("seed %d: worker process failed: %v%s", seed, err, wk.stderrTail()))
}

func (rn *Runner) failed(seed uint64, v Verdict, reason string) *Result {
	r := &Result{Seed: seed, Verdict: v, Faults: []Fault{}, Failure: &Failure{Kind: string(v), Reason: reason}}
	if v == VerdictError {
		r.Error = reason
	}
	r.Failure.Signature = Signature(r)
	return r
}

func (rn *Runner) get() (*worker, error) {
	rn.mu.Lock()
	if rn.done {
		rn.mu.Unlock()
		return nil, fmt.Errorf("runner closed")
	}
	if n := len(rn.idle); n > 0 {
		wk := rn.idle[n-1]
		rn.idle = rn.idle[:n-1]
		rn.mu.Unlock()
		return wk, nil
	}
	rn.mu.Unlock()
	return startWorker(rn.opt.Command())
}

// put returns a worker after a run; after Close it is stopped instead.
func (rn *Runner) put(wk *worker) {
	rn.mu.Lock()
	if !rn.done {
		rn.idle = append(rn.idle, wk)
		wk = nil
	}
	rn.mu.Unlock()
	if wk != nil {
		wk.stop()
	}
}

func (rn *Runner) drop(wk *worker) { wk.stop() }

// Close stops the idle workers; a worker still running a seed is stopped when its run
// ends.
func (rn *Runner) Close() {
	rn.mu.Lock()
	rn.done = true
	ws := rn.idle
	rn.idle = nil
	rn.mu.Unlock()
	for _, wk := range ws {
		wk.stop()
	}
}
