package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ParseSeeds parses a seed list: "1-1000", "7", "1-5,9,20-22". Seeds are returned in
// ascending order without duplicates.
func ParseSeeds(spec string) ([]uint64, error) {
	const most = 10_000_000
	seen := map[uint64]bool{}
	var out []uint64
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seeds: %q is not a seed or a range such as 1-500", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil {
				return nil, fmt.Errorf("seeds: %q is not a seed or a range such as 1-500", part)
			}
			if b < a {
				return nil, fmt.Errorf("seeds: range %q runs backwards", part)
			}
		}
		if b-a >= most || len(seen)+int(b-a+1) > most {
			return nil, fmt.Errorf("seeds: %q asks for more than %d seeds", spec, most)
		}
		for x := a; ; x++ {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
			if x == b {
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// Shard returns shard i of n (1-based) of seeds: every n-th seed starting at index i-1.
// The shards of 1/n … n/n partition the seeds.
func Shard(seeds []uint64, i, n int) []uint64 {
	var out []uint64
	for k, s := range seeds {
		if k%n == i-1 {
			out = append(out, s)
		}
	}
	return out
}

// ParseShard parses "i/n".
func ParseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("shard %q: want i/n with 1 <= i <= n, e.g. 2/4", s)
	}
	return i, n, nil
}

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
	// Grace is added to the config's watchdog before a worker is killed (default 10s, or
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
		grace = 10 * time.Second
		if d, err := time.ParseDuration(os.Getenv("SEEDFALL_WATCHDOG_GRACE")); err == nil {
			grace = d
		}
	}
	opt.Workers = max(1, opt.Workers)
	return &Pool{cfg: cfg, opt: opt, limit: time.Duration(cfg.Watchdog) + grace, idle: make(chan *worker, opt.Workers)}
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
	var firstErr error
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
				if wk == nil {
					var err error
					wk, err = startWorker(p.opt.Command())
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						continue
					}
				}
				req := tmpl
				req.Seed = seed
				r, err := wk.run(ctx, req, p.limit)
				if err != nil {
					wk.stop()
					if ctx.Err() != nil {
						wk = nil
						continue
					}
					// The worker died or hung: count it, replace it.
					r = &Result{Seed: seed, Verdict: VerdictWatchdog, Faults: []Fault{}}
					reason := fmt.Sprintf("seed %d: worker stopped after %s without an answer (a guest spinning without host calls?)", seed, p.limit)
					if !strings.Contains(err.Error(), "timeout") {
						r.Verdict = VerdictError
						reason = fmt.Sprintf("seed %d: worker process failed: %v%s", seed, err, wk.stderrTail())
						r.Error = reason
					}
					r.Failure = &Failure{Kind: string(r.Verdict), Reason: reason}
					r.Failure.Signature = Signature(r)
					wk = nil
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
	if firstErr != nil && len(results) == 0 {
		return nil, firstErr
	}
	return results, ctx.Err()
}

type worker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
}

type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func startWorker(cmd *exec.Cmd) (*worker, error) {
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
	// A killed worker whose own children still hold its pipes must not stall the sweep.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return &worker{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: tb}, nil
}

func (wk *worker) stderrTail() string {
	wk.stderr.mu.Lock()
	defer wk.stderr.mu.Unlock()
	if len(wk.stderr.buf) == 0 {
		return ""
	}
	return ": " + strings.TrimSpace(string(wk.stderr.buf))
}

func (wk *worker) run(ctx context.Context, req SeedRequest, limit time.Duration) (*Result, error) {
	line, _ := json.Marshal(req)
	if _, err := wk.in.Write(append(line, '\n')); err != nil {
		return nil, err
	}
	type answer struct {
		line []byte
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := wk.out.ReadBytes('\n')
		ch <- answer{line, err}
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, a.err
		}
		var r Result
		if err := json.Unmarshal(a.line, &r); err != nil {
			return nil, fmt.Errorf("bad answer from worker: %w", err)
		}
		return &r, nil
	case <-t.C:
		return nil, fmt.Errorf("timeout")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (wk *worker) stop() {
	wk.in.Close()
	if wk.cmd.Process != nil {
		wk.cmd.Process.Kill()
	}
	wk.cmd.Wait()
}

// ServeWorker is the worker side of SweepIsolated: it reads seeds from in and writes
// results to out until in closes.
func ServeWorker(ctx context.Context, s *Sim, opt RunOptions, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	for sc.Scan() {
		var req SeedRequest
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &req); err != nil {
				return fmt.Errorf("worker: bad request %q: %v", line, err)
			}
		} else {
			seed, err := strconv.ParseUint(line, 10, 64)
			if err != nil {
				return fmt.Errorf("worker: bad seed line %q", line)
			}
			req.Seed = seed
		}
		o := opt
		if req.Mutation != "" {
			o.Mutation = req.Mutation
		}
		if req.Check {
			o.Check = true
		}
		seed := req.Seed
		r := s.Run(ctx, seed, o)
		if err := enc.Encode(r); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if r.Verdict == VerdictWatchdog {
			// The stuck guest's goroutine still spins: this process is spent.
			return fmt.Errorf("worker: watchdog fired on seed %d; exiting", seed)
		}
	}
	return sc.Err()
}
