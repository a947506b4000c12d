package engine

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

var (
	benchMu   sync.Mutex
	benchSims = map[string]*Sim{}
)

func benchSim(b testing.TB, path string) *Sim { return benchSimPath(b, path, false) }

// benchSimPath prepares path once per process, on the image path or (plain) wazero's.
func benchSimPath(b testing.TB, path string, plain bool) *Sim {
	benchMu.Lock()
	defer benchMu.Unlock()
	key := fmt.Sprint(path, plain)
	if s := benchSims[key]; s != nil {
		return s
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		b.Fatal(err)
	}
	s, err := Prepare(context.Background(), cfg, PrepareOptions{PlainInstantiate: plain})
	if err != nil {
		b.Fatal(err)
	}
	benchSims[key] = s
	return s
}

const fixedKvlog = "../examples/kvlog/seedfall.fixed.json"

// BenchmarkKvlogRun is one run of fixed kvlog in this process (seeds vary).
func BenchmarkKvlogRun(b *testing.B) {
	benchRuns(b, fixedKvlog, RunOptions{})
}

// BenchmarkKvlogRunPlain is BenchmarkKvlogRun with every module instantiated by wazero's
// plain path (no memory image).
func BenchmarkKvlogRunPlain(b *testing.B) {
	benchRunsPath(b, fixedKvlog, RunOptions{}, true)
}

// BenchmarkKvlogCheck is one -check run of fixed kvlog: the seed twice, traces compared.
func BenchmarkKvlogCheck(b *testing.B) {
	benchRuns(b, fixedKvlog, RunOptions{Check: true})
}

func benchRuns(b *testing.B, path string, opt RunOptions) { benchRunsPath(b, path, opt, false) }

func benchRunsPath(b *testing.B, path string, opt RunOptions, plain bool) {
	s := benchSimPath(b, path, plain)
	b.ResetTimer()
	var calls, switches, incs int64
	cpu0, cpuOK := processCPU()
	for i := 0; i < b.N; i++ {
		r := s.Run(context.Background(), uint64(i+1), opt)
		if r.Verdict != VerdictPass {
			b.Fatalf("seed %d: %s", i+1, r)
		}
		calls += r.Stats.HostCalls
		switches += r.Stats.Switches
		incs += int64(r.Stats.Incarnations)
	}
	b.ReportMetric(float64(calls)/float64(b.N), "hostcalls/run")
	b.ReportMetric(float64(switches)/float64(b.N), "switches/run")
	b.ReportMetric(float64(incs)/float64(b.N), "incarnations/run")
	if cpu1, ok := processCPU(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/run")
	}
}

// BenchmarkHelloRun is the engine's floor: one incarnation that starts the Go runtime,
// prints a line and exits.
func BenchmarkHelloRun(b *testing.B) {
	benchRuns(b, "testdata/hello/seedfall.json", RunOptions{})
}

// BenchmarkHelloTestRun is BenchmarkHelloRun's guest as a Go test binary: next to
// BenchmarkHelloRun, what the testing package's start adds to every incarnation of a
// simulation test's node (issue 61: `seedfall test` against the JSON harness). Run both
// in one go for the difference: -bench 'HelloRun$|HelloTestRun' -count 10.
func BenchmarkHelloTestRun(b *testing.B) {
	benchRuns(b, "testdata/hellotest/seedfall.json", RunOptions{})
}

// BenchmarkHelloRunPlain is BenchmarkHelloRun on wazero's plain instantiate path.
func BenchmarkHelloRunPlain(b *testing.B) {
	benchRunsPath(b, "testdata/hello/seedfall.json", RunOptions{}, true)
}

// BenchmarkFloorInstantiate instantiates and closes kvlog's server module with no
// simulation and no guest code run: the bare cost of one incarnation, plain (wazero
// applies the data segments) and from the memory image. Run both in one go for the
// ratio: -bench FloorInstantiate -count 10.
func BenchmarkFloorInstantiate(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchInstantiate(b, true) })
	b.Run("image", func(b *testing.B) { benchInstantiate(b, false) })
}

func benchInstantiate(b *testing.B, plain bool) {
	s := benchSimPath(b, fixedKvlog, plain)
	if !plain && s.imageErrs[0] != nil {
		b.Fatalf("not on the image path: %v", s.imageErrs[0])
	}
	ctx := context.Background()
	if alloc := s.allocs[0]; alloc != nil {
		ctx = experimental.WithMemoryAllocator(ctx, alloc)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := s.rt.InstantiateModule(ctx, s.modules[0], wazero.NewModuleConfig().WithName("").WithStartFunctions())
		if err != nil {
			b.Fatal(err)
		}
		m.Close(ctx)
	}
}

// BenchmarkCause runs kvlog's cause analysis on a failing seed: futures/s.
func BenchmarkCause(b *testing.B) {
	s := benchSim(b, "../examples/kvlog/seedfall.json")
	seed := failingSeed(b, s)
	b.ResetTimer()
	futures := 0
	for i := 0; i < b.N; i++ {
		res, err := s.Cause(context.Background(), seed, CauseOptions{Moments: 10, Futures: 10, Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		futures += res.Futures
	}
	b.ReportMetric(float64(futures)/b.Elapsed().Seconds(), "futures/s")
}

// BenchmarkShrink shrinks a failing kvlog seed.
func BenchmarkShrink(b *testing.B) {
	s := benchSim(b, "../examples/kvlog/seedfall.json")
	seed := failingSeed(b, s)
	b.ResetTimer()
	runs := 0
	for i := 0; i < b.N; i++ {
		res, err := s.Shrink(context.Background(), seed, ShrinkOptions{Workers: 2})
		if err != nil {
			b.Fatal(err)
		}
		runs += res.Runs
	}
	b.ReportMetric(float64(runs)/float64(b.N), "runs/shrink")
}

func failingSeed(b *testing.B, s *Sim) uint64 {
	for seed := uint64(1); seed < 500; seed++ {
		if r := s.Run(context.Background(), seed, RunOptions{}); r.Verdict == VerdictFail {
			return seed
		}
	}
	b.Fatal("no failing seed in 1-499")
	return 0
}

// BenchmarkCoverageCost alternates runs of one seed without and with coverage
// ("coverage": {"packages": ["./..."]}) of fixed kvlog, in this process, and reports
// the ratio of their wall times: the per-run cost of coverage, measured in one run.
func BenchmarkCoverageCost(b *testing.B) {
	benchCoverageCost(b, fixedKvlog, []string{"./..."})
}

// BenchmarkCoverageCostWal is BenchmarkCoverageCost on examples/tidwall-wal with
// the library itself instrumented.
func BenchmarkCoverageCostWal(b *testing.B) {
	benchCoverageCost(b, "../examples/tidwall-wal/tidwall.fixed.json", []string{"github.com/tidwall/wal/...", "./..."})
}

func benchCoverageCost(b *testing.B, path string, pkgs []string) {
	off := benchSim(b, path)
	benchMu.Lock()
	on := benchSims[path+" coverage"]
	if on == nil {
		cfg, err := LoadConfig(path)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Coverage = &CoverageConfig{Packages: pkgs}
		if on, err = Prepare(context.Background(), cfg, PrepareOptions{}); err != nil {
			b.Fatal(err)
		}
		benchSims[path+" coverage"] = on
	}
	benchMu.Unlock()
	b.ResetTimer()
	var tOff, tOn time.Duration
	var ratios []float64
	units := 0
	for i := 0; i < b.N; i++ {
		seed := uint64(i + 1)
		timed := func(s *Sim) (*Result, time.Duration) {
			t0 := time.Now()
			r := s.Run(context.Background(), seed, RunOptions{})
			return r, time.Since(t0)
		}
		// Alternate which goes first, so that neither profits from the other's warm-up.
		var r1, r2 *Result
		var d1, d2 time.Duration
		if i%2 == 0 {
			r1, d1 = timed(off)
			r2, d2 = timed(on)
		} else {
			r2, d2 = timed(on)
			r1, d1 = timed(off)
		}
		if r1.Verdict == VerdictError || r2.Verdict == VerdictError || r2.Coverage == nil {
			b.Fatalf("seed %d: %s / %s", seed, r1, r2)
		}
		tOff += d1
		tOn += d2
		ratios = append(ratios, float64(d2)/float64(d1))
		units += len(r2.Coverage.Units())
	}
	sort.Float64s(ratios)
	b.ReportMetric(float64(tOff.Nanoseconds())/float64(b.N), "ns/run-off")
	b.ReportMetric(float64(tOn.Nanoseconds())/float64(b.N), "ns/run-cover")
	b.ReportMetric(float64(tOn)/float64(tOff), "cover/off")
	b.ReportMetric(ratios[len(ratios)/2], "median-cover/off")
	b.ReportMetric(float64(units)/float64(b.N), "units/run")
}

// BenchmarkKvlogRunProfiled is BenchmarkKvlogRun with the guest profiler on: its cost
// over BenchmarkKvlogRun is the profiler's. With SEEDFALL_BENCH_PROFILE=file it writes
// the profile of all b.N runs there (for go tool pprof).
func BenchmarkKvlogRunProfiled(b *testing.B) {
	s := benchSim(b, fixedKvlog)
	p := newProfiler(s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := s.run(context.Background(), uint64(i+1), RunOptions{}, p); r.Verdict != VerdictPass {
			b.Fatalf("seed %d: %s", i+1, r)
		}
	}
	b.StopTimer()
	if path := os.Getenv("SEEDFALL_BENCH_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if _, err := p.WriteTo(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInterleaveKvlog is the cost of interleave: fixed kvlog with and without it
// on its server, the same seed back to back (alternating, so that the machine's load
// hits both alike). It reports the ratios of their total wall and CPU time (the
// process's, user and system: the steadier measure on a loaded machine) and
// interleave's choices per run. One iteration is one seed of each.
func BenchmarkInterleaveKvlog(b *testing.B) {
	off := benchSim(b, fixedKvlog)
	on := benchSim(b, "../examples/kvlog/seedfall.fixed.interleave.json")
	b.ResetTimer()
	var wall, cpu [2]time.Duration
	var picks int64
	for i := 0; i < b.N; i++ {
		seed := uint64(i + 1)
		for side, s := range []*Sim{off, on} {
			t0 := time.Now()
			c0, _ := processCPU()
			r := s.Run(context.Background(), seed, RunOptions{})
			c1, _ := processCPU()
			wall[side] += time.Since(t0)
			cpu[side] += c1 - c0
			if r.Verdict != VerdictPass {
				b.Fatalf("seed %d: %s", seed, r)
			}
			picks += r.Stats.InterleavePicks
		}
	}
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "wall-on/off")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-on/off")
	b.ReportMetric(float64(wall[0].Milliseconds())/float64(b.N), "off-wall-ms/seed")
	b.ReportMetric(float64(wall[1].Milliseconds())/float64(b.N), "on-wall-ms/seed")
	b.ReportMetric(float64(picks)/float64(b.N), "picks/run")
}
