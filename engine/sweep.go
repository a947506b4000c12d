package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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
	// Parse every part into a range first and count the seeds they cover, so that an
	// oversized spec ("1-10000000000", or many large ranges) is refused before anything
	// is allocated per seed.
	type span struct{ lo, hi uint64 }
	var spans []span
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
		if b-a >= most {
			return nil, fmt.Errorf("seeds: %q asks for more than %d seeds", spec, most)
		}
		spans = append(spans, span{a, b})
		if len(spans) > most {
			return nil, fmt.Errorf("seeds: %q asks for more than %d seeds", spec, most)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.lo <= last.hi || sp.lo == last.hi+1 {
			last.hi = max(last.hi, sp.hi)
			continue
		}
		merged = append(merged, sp)
	}
	total := uint64(0)
	for _, sp := range merged {
		total += sp.hi - sp.lo + 1
		if total > most {
			return nil, fmt.Errorf("seeds: %q asks for more than %d seeds", spec, most)
		}
	}
	out := make([]uint64, 0, total)
	for _, sp := range merged {
		for x := sp.lo; ; x++ {
			out = append(out, x)
			if x == sp.hi {
				break
			}
		}
	}
	return out, nil
}

// FormatSeedSpec writes seeds (ascending, no duplicates) as the shortest spec that
// ParseSeeds reads back: runs of consecutive seeds as ranges, "1-100,105,200-210".
func FormatSeedSpec(seeds []uint64) string {
	var b strings.Builder
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(seeds[i], 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(seeds[j], 10))
		}
		i = j + 1
	}
	return b.String()
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

type worker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
	served int // requests answered
}

// startAllowance is added to a fresh worker's first limit: it loads and compiles the
// modules (from the compilation cache) before it can answer.
const startAllowance = 60 * time.Second

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

// run sends one request (a SeedRequest or a RunRequest) to the worker and waits for its
// answer, at most limit (plus startAllowance on a fresh worker).
func (wk *worker) run(ctx context.Context, req any, limit time.Duration) (*Result, error) {
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
	go func() {
		line, err := wk.out.ReadBytes('\n')
		ch <- answer{line, err}
	}()
	if wk.served == 0 {
		limit += startAllowance
	}
	cpu0, cpuKnown := wk.cpu()
	t := time.NewTimer(limit)
	defer t.Stop()
	waited := limit
	for {
		select {
		case a := <-ch:
			if a.err != nil {
				return nil, a.err
			}
			var r Result
			if err := json.Unmarshal(a.line, &r); err != nil {
				return nil, fmt.Errorf("bad answer from worker: %w", err)
			}
			wk.served++
			return &r, nil
		case <-t.C:
			// The limit is wall-clock time and the worker's CPU time, as for the
			// watchdog inside it: a worker that a loaded machine starves has not
			// overrun, up to starvedFactor limits of wall-clock time.
			if cpu, ok := wk.cpu(); cpuKnown && ok && cpu-cpu0 < limit && waited < starvedFactor*limit {
				step := max(limit/4, time.Second)
				waited += step
				t.Reset(step)
				continue
			}
			return nil, fmt.Errorf("timeout")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// starvedFactor bounds how long a worker that uses less CPU than its limit is waited for:
// starvedFactor limits of wall-clock time (a worker that is blocked, not starved).
const starvedFactor = 10

// cpu is the CPU time the worker process has used so far, where the OS tells it.
func (wk *worker) cpu() (time.Duration, bool) {
	if wk.cmd.Process == nil {
		return 0, false
	}
	return childCPU(wk.cmd.Process.Pid)
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
