package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/seedfall/seedfall/engine/internal/build"
	"github.com/seedfall/seedfall/engine/internal/goloc"
	"github.com/seedfall/seedfall/engine/internal/lin"
	"github.com/seedfall/seedfall/engine/internal/overlay"
	"github.com/seedfall/seedfall/engine/internal/wasi"
	"github.com/seedfall/seedfall/internal/cachedir"
)

// Sim is a prepared world: the config with its nodes built and compiled. One Sim runs any
// number of seeds, concurrently.
type Sim struct {
	cfg        *Config
	rt         wazero.Runtime
	modules    []wazero.CompiledModule
	locs       []*goloc.Table // per module, AllNodes order; nil: no source locations
	wasmPaths  []string
	wasmHashes []string // per module, for Provenance
	// allocs supply each module's guest memories; imageErrs say why a module is not on
	// the image path (image_sim.go); closers release the images.
	allocs     []experimental.MemoryAllocator
	imageErrs  []error
	closers    []func()
	antithesis bool
	// unsafeHostClock: see PrepareOptions.UnsafeHostClock.
	unsafeHostClock bool
	nodeIPs         map[string]string // fake IP -> node name, as the net overlay assigns them
	coverMetas      coverMetaCache    // coverage meta-data files written by this process
	// Timings of preparation, for benchmarks and SEEDFALL_TIMINGS: BuildTime builds (or
	// finds) the modules; CompileTime is the rest, of which ImageTime made the memory
	// images, WazeroTime compiled (or loaded the compiled) modules and LocTime read the
	// source location tables.
	BuildTime, CompileTime         time.Duration
	ImageTime, WazeroTime, LocTime time.Duration
	prepMu                         sync.Mutex // closers and the timings while modules compile
}

// PrepareOptions tune Prepare.
type PrepareOptions struct {
	// Wasm, when set, skips building and loads these module files (one per node, in
	// AllNodes order, then the old build of each node with an upgrade, in the same
	// order: WasmPaths): worker processes use the parent's builds.
	Wasm []string
	// Progress receives a line per step (may be nil).
	Progress func(string)
	// UnsafeHostClock lets guests that import seedfall.test_host_clock read the host's
	// wall clock: a deliberate nondeterminism, for testing that -check catches it.
	UnsafeHostClock bool
	// PlainInstantiate instantiates every module as wazero does, applying its data
	// segments each time, instead of from a memory image (image.go): for comparing the
	// two paths.
	PlainInstantiate bool
	// BuildOnly builds (or finds in the cache) every node's module and hashes it, and
	// compiles nothing: the Sim answers WasmPaths and Provenance and cannot run. A
	// caller that only needs to know which build it has (a preflight kept for this
	// build) skips the compilation, seconds for a large module.
	BuildOnly bool
}

// Prepare builds every node for wasip1 and compiles the modules.
func Prepare(ctx context.Context, cfg *Config, opt PrepareOptions) (*Sim, error) {
	s := &Sim{cfg: cfg, unsafeHostClock: opt.UnsafeHostClock}
	nodes := cfg.AllNodes()
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	ips, err := overlay.NodeIPs(names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Path, err)
	}
	s.nodeIPs = map[string]string{}
	for ip, name := range ips {
		s.nodeIPs[ip.String()] = name
	}
	t0 := time.Now()
	if opt.Wasm != nil {
		if want := len(nodes) + len(upgradeNodes(cfg)); len(opt.Wasm) != want {
			return nil, fmt.Errorf("prepare: %d modules given for %d nodes and %d old builds", len(opt.Wasm), len(nodes), want-len(nodes))
		}
		s.wasmPaths = opt.Wasm
	} else {
		// An old build's git revision that does not exist fails before any build runs.
		for _, i := range upgradeNodes(cfg) {
			if err := checkRevision(ctx, cfg, nodes[i]); err != nil {
				return nil, err
			}
		}
		// Nodes built alike (three replicas of one server) share one build.
		built := map[string]string{}
		for _, n := range nodes {
			key := fmt.Sprintf("%q %v %v %q %q %v %v", n.Pkg, n.Test, n.NetOverlay, n.Patches, n.Tags, n.Interleave.On, n.Interleave.FileOps)
			if p, ok := built[key]; ok {
				s.wasmPaths = append(s.wasmPaths, p)
				continue
			}
			if opt.Progress != nil {
				opt.Progress(fmt.Sprintf("building %s (%s) for wasip1", n.Name, n.Pkg))
			}
			spec := buildSpec(cfg, n)
			spec.Progress = opt.Progress
			p, err := build.Node(ctx, spec)
			if err != nil {
				return nil, err
			}
			built[key] = p
			s.wasmPaths = append(s.wasmPaths, p)
		}
		for _, i := range upgradeNodes(cfg) {
			n := nodes[i]
			if opt.Progress != nil {
				opt.Progress(fmt.Sprintf("building %s's old build (%s) for wasip1", n.Name, n.Upgrade.From))
			}
			p, err := buildOld(ctx, cfg, n)
			if err != nil {
				return nil, err
			}
			s.wasmPaths = append(s.wasmPaths, p)
		}
	}
	if cfg.Coverage != nil && opt.Wasm == nil {
		if err := cfg.Coverage.checkMatched(); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.Path, err)
		}
	}
	s.BuildTime = time.Since(t0)
	if opt.BuildOnly {
		for _, p := range s.wasmPaths {
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			s.wasmHashes = append(s.wasmHashes, wasmHash(data))
		}
		return s, nil
	}
	t1 := time.Now()
	cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(build.CacheDir(), "wazero"))
	if err != nil {
		return nil, fmt.Errorf("compilation cache: %w", err)
	}
	rc := wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(cache).
		WithMemoryLimitPages(uint32(cfg.MemoryLimitMiB) * 16)
	s.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	if err := wasi.Instantiate(ctx, s.rt); err != nil {
		s.rt.Close(ctx)
		return nil, fmt.Errorf("host modules: %w", err)
	}
	// Modules past the nodes' own are old builds, one per node with an upgrade.
	for _, i := range upgradeNodes(cfg) {
		names = append(names, nodes[i].Name+" (old build)")
	}
	// Nodes that share a build (three replicas of one server) share its compiled module,
	// memory image and source locations: compiling the same module again would decode and
	// validate it again.
	first := map[string]int{}
	type compiled struct {
		m          wazero.CompiledModule
		alloc      experimental.MemoryAllocator
		imageErr   error
		hash       string
		loc        *goloc.Table
		lerr, err  error
		antithesis bool
	}
	out := make([]*compiled, len(s.wasmPaths))
	var wg sync.WaitGroup
	for i, p := range s.wasmPaths {
		if _, ok := first[p]; ok {
			continue
		}
		first[p] = i
		c := &compiled{}
		out[i] = c
		// Distinct modules compile concurrently (a server and its client on two cores).
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := os.ReadFile(p)
			if err != nil {
				c.err = err
				return
			}
			c.antithesis = bytes.Contains(data, []byte("ANTITHESIS_SDK_LOCAL_OUTPUT"))
			c.hash = wasmHash(data)
			// Another process compiling the same module (go test runs packages that run
			// one guest side by side) is waited for: its compilation lands in wazero's
			// file cache, which this one then reads.
			unlock, err := cachedir.Lock(ctx, filepath.Join(build.CacheDir(), "locks", "compile-"+c.hash+".lock"), func() {
				if opt.Progress != nil {
					s.prepMu.Lock()
					opt.Progress(fmt.Sprintf("waiting for another seedfall process that compiles %s", names[i]))
					s.prepMu.Unlock()
				}
			})
			if err != nil {
				c.err = err
				return
			}
			c.m, c.alloc, c.imageErr, c.err = s.compileNode(ctx, data, opt.PlainInstantiate)
			unlock()
			if c.err != nil {
				c.err = fmt.Errorf("compile node %q: %w", names[i], c.err)
				return
			}
			tl := time.Now()
			c.loc, c.lerr = goloc.Load(data)
			s.addTime(&s.LocTime, time.Since(tl))
		}()
	}
	wg.Wait()
	for i, p := range s.wasmPaths {
		c := out[first[p]]
		if c.err != nil {
			s.Close()
			return nil, c.err
		}
		if out[i] != nil && c.lerr != nil && opt.Progress != nil {
			opt.Progress(fmt.Sprintf("node %s: no source locations: %v", names[i], c.lerr))
		}
		s.antithesis = s.antithesis || c.antithesis
		s.modules = append(s.modules, c.m)
		s.allocs = append(s.allocs, c.alloc)
		s.imageErrs = append(s.imageErrs, c.imageErr)
		s.wasmHashes = append(s.wasmHashes, c.hash)
		s.locs = append(s.locs, c.loc)
	}
	s.CompileTime = time.Since(t1)
	return s, nil
}

// Close releases the runtime and the memory images.
func (s *Sim) Close() error {
	var err error
	if s.rt != nil { // nil: PrepareOptions.BuildOnly
		err = s.rt.Close(context.Background())
	}
	for _, c := range s.closers {
		c()
	}
	s.closers = nil
	return err
}

// Config returns the sim's config.
func (s *Sim) Config() *Config { return s.cfg }

// RunOptions tune one run. They are the one description of how to run a seed: an
// in-process run, a sweep (SweepOptions embeds them) and a worker process (which
// receives them as JSON) all take this type. The fields that cannot cross a process
// boundary (functions, the profiler) are left out of the JSON.
type RunOptions struct {
	// Plan replays this fault plan instead of drawing one from the seed.
	Plan *FaultPlan `json:"plan,omitempty"`
	// Trace keeps the full trace in Result.Trace.
	Trace bool `json:"trace,omitempty"`
	// Mutation runs under a durability mutation of the simulated OS.
	Mutation string `json:"mutation,omitempty"`
	// Check runs the seed twice and compares the traces line by line.
	Check bool `json:"check,omitempty"`
	// ReseedAt, when > 0, re-randomizes everything after this virtual time with
	// FutureSeed (cause).
	ReseedAt   int64  `json:"reseed_at,omitempty"`
	FutureSeed uint64 `json:"future_seed,omitempty"`
	// OutDir receives files a run writes (Porcupine visualizations).
	OutDir string `json:"outdir,omitempty"`

	// TraceHook receives every trace line as it is written (may be nil).
	TraceHook func(string) `json:"-"`
	// Profile, when set, receives a CPU profile of the run in pprof's format (a gzipped
	// profile.proto, for go tool pprof; profile.go) after the run. It reads the host
	// clock, but only for the profile: the run and its trace are the same without. Run
	// has no error to return, so give it a writer that keeps its first error (a
	// bufio.Writer, whose Flush returns it).
	Profile io.Writer `json:"-"`
	// OnWatchdog, when set, is called by the watchdog's monitor goroutine the moment the
	// watchdog fires, before the run returns. It must not allocate: a garbage collection
	// under way when the guest began to spin can never finish, and an allocation may
	// then block for good. A worker process uses it to answer even so.
	OnWatchdog func() `json:"-"`
	// Progress, when set, is called about once a second of wall-clock time from another
	// goroutine while the run goes on, with how far it got (a long preflight or replay
	// shows it on a terminal). It only reads: the run, its trace and its result are the
	// same without it.
	Progress func(RunProgress) `json:"-"`
}

// RunProgress is how far a run in progress got.
type RunProgress struct {
	Elapsed   time.Duration // wall-clock time since the run started
	VirtualNS int64         // the virtual clock
	Steps     int64         // the scheduler's steps so far (events fired, hand-overs)
}

// Run runs one seed.
func (s *Sim) Run(ctx context.Context, seed uint64, opt RunOptions) *Result {
	if opt.Profile == nil {
		return s.run(ctx, seed, opt, nil)
	}
	p := newProfiler(s)
	r := s.run(ctx, seed, opt, p)
	_, _ = p.WriteTo(opt.Profile) // a write error stays with the writer (RunOptions.Profile)
	return r
}

// run runs one seed, charging its time to prof when it is not nil (tests sum several
// runs in one profile).
func (s *Sim) run(ctx context.Context, seed uint64, opt RunOptions, prof *profiler) *Result {
	if err := checkMutation(opt.Mutation); err != nil {
		return &Result{Seed: seed, Verdict: VerdictError, Error: err.Error()}
	}
	ro := runOptions{
		plan: opt.Plan, keepTrace: opt.Trace || opt.Check, mutation: opt.Mutation,
		reseedAt: opt.ReseedAt, futureSeed: opt.FutureSeed,
		wallBudget: time.Duration(s.cfg.Watchdog), traceHook: opt.TraceHook,
		prof: prof, onWatchdog: opt.OnWatchdog, progress: opt.Progress,
	}
	w := newWorld(s, seed, ro)
	w.outDir = opt.OutDir
	r := w.runProfiled(ctx)
	if !opt.Check || r.Verdict == VerdictWatchdog {
		return r
	}
	s.check(ctx, seed, ro, opt, r)
	return r
}

// checkHistory checks the recorded history for linearizability when the config asks.
func (w *world) checkHistory(r *Result) {
	lc := w.cfg.Linearizability
	if lc == nil || len(w.history) == 0 {
		return
	}
	ops := make([]lin.Op, len(w.history))
	for i, h := range w.history {
		ops[i] = lin.Op{Client: h.client, Input: h.input, Output: h.output, CallNS: h.call, ReturnNS: h.ret, Returned: h.returned}
	}
	// The check runs after the run and is not part of it: its outcome (decided, or out of
	// budget) never reaches the trace, so the trace hash and -check do not depend on it.
	rep, info, err := lin.CheckBudget(lc.Model, ops, lin.Budget{Steps: lc.Steps, Timeout: time.Duration(lc.Timeout)})
	name := "linearizable (" + lc.Model + ")"
	hit := PropertyHit{Name: name, Kind: PropAlways, Reached: true, Held: rep.Outcome != lin.Illegal, Count: 1}
	w.props[name] = &hit
	switch {
	case err != nil:
		r.Verdict = VerdictFail
		r.Failure = &Failure{Kind: KindLinearizability, AtNS: w.now, Reason: "history does not fit the model: " + err.Error()}
	case rep.Outcome == lin.Illegal:
		r.Verdict = VerdictFail
		r.Failure = &Failure{Kind: KindLinearizability, AtNS: w.now,
			Reason: fmt.Sprintf("history of %d operations is not linearizable (%s): %s", rep.Ops, lc.Model, rep.Detail)}
		if w.outDir != "" {
			p := filepath.Join(w.outDir, fmt.Sprintf("seed-%d.linearizability.html", w.seed))
			if err := os.MkdirAll(w.outDir, 0o755); err == nil && lin.Visualize(p, lc.Model, ops, info) == nil {
				r.Failure.Visualization = p
			}
		}
	case rep.Outcome == lin.Unknown:
		hit.Held = true
		r.LinUnknown = true
		r.LinDetail = rep.Detail
	}
}

// SweepOptions tune Sweep: how to run each seed, and the sweep's own knobs.
type SweepOptions struct {
	RunOptions
	// Workers is the number of seeds run at once (default: the number of CPUs).
	Workers int
	// OnResult is called for each result as it completes (in completion order).
	OnResult func(*Result)
}

// Sweep runs many seeds in this process, in parallel, and returns results in seed order.
// A guest that spins without host calls is stopped by the watchdog verdict but its
// goroutine cannot be reclaimed; the CLI runs sweeps in worker processes instead
// (internal/worker).
func (s *Sim) Sweep(ctx context.Context, seeds []uint64, opt SweepOptions) []*Result {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	results := make([]*Result, len(seeds))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for idx := range next {
				r := s.Run(ctx, seeds[idx], opt.RunOptions)
				results[idx] = r
				if opt.OnResult != nil {
					mu.Lock()
					opt.OnResult(r)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range seeds {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	var out []*Result
	for _, r := range results {
		if r != nil {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seed < out[j].Seed })
	return out
}
