// Package worker runs seeds in worker processes: one protocol (Request in, engine.Result
// out, one JSON object a line), one worker side (Serve) and one pool (Pool) that sweeps,
// shrink, cause, explore and the MCP server all use.
//
// A guest that spins without host calls cannot be preempted inside a process: its
// goroutine never reaches a safe point again, and the process's next garbage collection
// would wait for it forever. In a worker process that costs the worker (it answers
// "watchdog" and exits, or is killed), never the caller. See RATIONALE.md.
package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// Request is one line of the worker protocol: a seed and how to run it.
type Request struct {
	Seed    uint64            `json:"seed"`
	Options engine.RunOptions `json:"options"`
}

// Options tune a Pool.
type Options struct {
	// Workers is the most worker processes running at once (at least 1).
	Workers int
	// Command makes the command line of one worker process: a process that serves
	// Serve on its stdin and stdout.
	Command func() *exec.Cmd
	// Grace is added to the longest a run may take (runCap watchdog budgets) before a
	// worker that stopped answering is killed (default 10s, or $SEEDFALL_WATCHDOG_GRACE).
	Grace time.Duration
}

// runCap is the engine's cap on a run that keeps making progress, in watchdog budgets
// (engine/watchdog.go, runCapFactor): a worker answers within that, or its run is stuck.
const runCap = 10

// startAllowance is added to a fresh worker's first limit: it loads and compiles the
// modules (from the compilation cache) before it can answer.
const startAllowance = 60 * time.Second

// startFailure prefixes the reason of a seed that no worker process could be started for.
const startFailure = "could not start a worker process: "

// TimeoutError is a worker that did not answer within its limit.
type TimeoutError struct {
	Limit time.Duration
	// Noticed is set when the worker had said that the run's watchdog fired, and Limit
	// is the time it had since to answer.
	Noticed bool
}

func (e *TimeoutError) Error() string {
	if e.Noticed {
		return fmt.Sprintf("no answer within %s of the watchdog's notice", e.Limit)
	}
	return fmt.Sprintf("no answer within %s", e.Limit)
}

// Pool is a set of worker processes that stay up across runs and sweeps, so that many
// short sweeps (mutate, shrink batches) pay the start-up of a worker once.
type Pool struct {
	cfg   *engine.Config
	opt   Options
	limit time.Duration
	slots chan struct{}
	mu    sync.Mutex
	idle  []*process
	done  bool
}

// NewPool makes a pool for cfg; workers start on first use and stay up until Close.
func NewPool(cfg *engine.Config, opt Options) *Pool {
	grace := opt.Grace
	if grace == 0 {
		grace = 10 * time.Second
		if d, err := time.ParseDuration(os.Getenv("SEEDFALL_WATCHDOG_GRACE")); err == nil {
			grace = d
		}
	}
	opt.Workers = max(1, opt.Workers)
	return &Pool{cfg: cfg, opt: opt, limit: runCap*time.Duration(cfg.Watchdog) + grace,
		slots: make(chan struct{}, opt.Workers)}
}

// Close stops the idle workers; a worker still running a seed is stopped when its run
// ends.
func (p *Pool) Close() {
	p.mu.Lock()
	p.done = true
	ws := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, wk := range ws {
		wk.stop()
	}
}

// Run runs one seed in a worker process, with the pool's other runs at most Workers at
// a time; its signature is engine.Sim.Run's, so Shrink, Cause and explore take it. When
// ctx is done the worker is killed and the result is a canceled error, as Sim.Run
// reports it.
func (p *Pool) Run(ctx context.Context, seed uint64, opt engine.RunOptions) *engine.Result {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return canceled(ctx, seed)
	}
	defer func() { <-p.slots }()
	r := p.run(ctx, seed, opt)
	if r == nil {
		return canceled(ctx, seed)
	}
	return r
}

// Sweep runs seeds with opt and returns their results in seed order; onResult (may be
// nil) is called for each as it completes, serialized. When ctx is done it stops
// handing out seeds, kills the workers that are running one and returns the results of
// the seeds that finished, with ctx's error; a seed cut short is left out. When no
// worker could be started for any seed, it returns that error.
func (p *Pool) Sweep(ctx context.Context, seeds []uint64, opt engine.RunOptions, onResult func(*engine.Result)) ([]*engine.Result, error) {
	next := make(chan uint64)
	results := make([]*engine.Result, 0, len(seeds))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < min(p.opt.Workers, len(seeds)); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range next {
				r := p.Run(ctx, seed, opt)
				if ctx.Err() != nil && isCanceled(r) {
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

// run runs one seed on an idle worker (or a fresh one) and puts the worker back after.
// No seed is ever dropped: a worker that dies without an answer for a reason other than
// a timeout (it may have been exiting already, after an earlier seed's watchdog) is
// replaced and the seed tried once more on a fresh worker, and a worker that fails to
// start is started once more; only then is the seed's outcome an error, counted like any
// other. A nil result means ctx was canceled.
func (p *Pool) run(ctx context.Context, seed uint64, opt engine.RunOptions) *engine.Result {
	limit := p.limit
	if opt.Check { // two runs
		limit += runCap * time.Duration(p.cfg.Watchdog)
	}
	var r *engine.Result
	for try := 0; try < 2; try++ {
		wk, err := p.get(try > 0)
		if err != nil {
			return failed(seed, engine.VerdictError, startFailure+err.Error())
		}
		res, err := wk.run(ctx, Request{Seed: seed, Options: opt}, limit)
		if err == nil {
			if res.Verdict == engine.VerdictWatchdog {
				wk.stop() // it exits after a watchdog: make sure of it
			} else {
				p.put(wk)
			}
			return res
		}
		wk.stop()
		if ctx.Err() != nil {
			return nil
		}
		var te *TimeoutError
		if errors.As(err, &te) && te.Noticed {
			return failed(seed, engine.VerdictWatchdog, fmt.Sprintf("seed %d: a guest ran past the watchdog budget without host calls, and the worker's run could not report it within %s (a garbage collection under way when the guest began to spin?): the worker was stopped%s", seed, te.Limit, wk.stderrTail()))
		}
		if errors.As(err, &te) {
			// The guest spun where the worker's own watchdog could not answer: running it
			// again would spin again.
			return failed(seed, engine.VerdictWatchdog, fmt.Sprintf("seed %d: worker stopped after %s without an answer (a guest spinning without host calls?)%s", seed, te.Limit, wk.stderrTail()))
		}
		r = failed(seed, engine.VerdictError, fmt.Sprintf("seed %d: worker process failed: %v%s", seed, err, wk.stderrTail()))
	}
	return r
}

// get takes an idle worker or starts one (trying twice). With fresh, it starts one: a
// seed's second try must not meet another idle worker that died the same way.
func (p *Pool) get(fresh bool) (*process, error) {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return nil, errors.New("worker pool closed")
	}
	if n := len(p.idle); n > 0 && !fresh {
		wk := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return wk, nil
	}
	p.mu.Unlock()
	wk, err := start(p.opt.Command())
	if err != nil {
		wk, err = start(p.opt.Command())
	}
	if wk != nil {
		wk.noticeGrace = max(time.Duration(p.cfg.Watchdog), time.Second)
	}
	return wk, err
}

// put returns a worker after a run; after Close it is stopped instead.
func (p *Pool) put(wk *process) {
	p.mu.Lock()
	if !p.done {
		p.idle = append(p.idle, wk)
		wk = nil
	}
	p.mu.Unlock()
	if wk != nil {
		wk.stop()
	}
}

// failed is the result of a seed that a worker could not run or did not answer for.
func failed(seed uint64, v engine.Verdict, reason string) *engine.Result {
	r := &engine.Result{Seed: seed, Verdict: v, Faults: []engine.Fault{}}
	if v == engine.VerdictError {
		r.Error = reason
	}
	r.Failure = &engine.Failure{Kind: engine.FailureKind(v), Reason: reason}
	r.Failure.Signature = engine.Signature(r)
	return r
}

// canceled is the result of a seed cut short by ctx, as Sim.Run reports it.
func canceled(ctx context.Context, seed uint64) *engine.Result {
	reason := "run canceled: " + ctx.Err().Error()
	return &engine.Result{Seed: seed, Verdict: engine.VerdictError, Faults: []engine.Fault{}, Error: reason,
		Failure: &engine.Failure{Kind: engine.KindCanceled, Reason: reason}}
}

func isCanceled(r *engine.Result) bool {
	return r.Verdict == engine.VerdictError && r.Failure != nil && r.Failure.Kind == engine.KindCanceled
}

func allStartFailures(rs []*engine.Result) bool {
	for _, r := range rs {
		if r.Verdict != engine.VerdictError || !strings.HasPrefix(r.Error, startFailure) {
			return false
		}
	}
	return true
}

// process is one running worker.
type process struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
	served int // requests answered
	// noticeGrace is how long the worker has to answer after its notice that the run's
	// watchdog fired.
	noticeGrace time.Duration
}

// tailBuffer keeps the last 4 KiB a worker wrote to stderr, for the error that names it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(b), nil
}

func start(cmd *exec.Cmd) (*process, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	tb := &tailBuffer{}
	cmd.Stderr = tb
	// A killed worker whose own children still hold its pipes must not stall the pool.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &process{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: tb}, nil
}

func (wk *process) stderrTail() string {
	wk.stderr.mu.Lock()
	defer wk.stderr.mu.Unlock()
	if len(wk.stderr.buf) == 0 {
		return ""
	}
	return ": " + strings.TrimSpace(string(wk.stderr.buf))
}

// run sends one request to the worker and waits for its answer, at most limit (plus
// startAllowance on a fresh worker). The limit is wall-clock time alone: it is the
// backstop for a worker that hangs (a guest spinning where the worker's own watchdog
// cannot see it, a worker that blocks), which may burn no CPU at all. The watchdog inside
// the worker, which also counts CPU time, is what spares a starved run; this limit is 10
// budgets and more.
func (wk *process) run(ctx context.Context, req Request, limit time.Duration) (*engine.Result, error) {
	line, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := wk.in.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	type answer struct {
		line []byte
		err  error
	}
	ch := make(chan answer, 1)
	noticed := make(chan struct{}, 1)
	notice := fmt.Appendf(nil, "%s%d\n", noticePrefix, wk.served)
	go func() {
		for {
			line, err := wk.out.ReadBytes('\n')
			if err == nil && bytes.HasPrefix(line, []byte(noticePrefix)) {
				if bytes.Equal(line, notice) { // a late one of an earlier run is no news
					noticed <- struct{}{}
				}
				continue
			}
			ch <- answer{line, err}
			return
		}
	}()
	if wk.served == 0 {
		limit += startAllowance
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	timeout := &TimeoutError{Limit: limit}
	for {
		select {
		case a := <-ch:
			if a.err != nil {
				return nil, a.err
			}
			var r engine.Result
			if err := json.Unmarshal(a.line, &r); err != nil {
				return nil, fmt.Errorf("bad answer from worker: %w", err)
			}
			wk.served++
			return &r, nil
		case <-noticed:
			// The run's watchdog fired: the answer is due at once. A worker that cannot
			// give it (its run blocked on a collection that will never finish) gets one
			// more budget, not the rest of the limit.
			t.Reset(wk.noticeGrace)
			timeout = &TimeoutError{Limit: wk.noticeGrace, Noticed: true}
		case <-t.C:
			return nil, timeout
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (wk *process) stop() {
	wk.in.Close()
	if wk.cmd.Process != nil {
		wk.cmd.Process.Kill()
	}
	wk.cmd.Wait()
}
