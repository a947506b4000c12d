package explore

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/coverage"
)

// fakeRun is a deterministic stand-in for a simulated run: a server whose every life
// does 12 disk ops (a create, then writes and fsyncs of a log), a fresh seed crashing it
// once, idle, at a time of its own. The run fails only when a crash interrupts the log's
// fsync in the server's second or later life — a crash during recovery's aftermath that
// a seed's own idle crashes never cause, which only plan edits reach.
func fakeRun(calls *atomic.Int64) func(context.Context, uint64, engine.RunOptions) *engine.Result {
	return func(ctx context.Context, seed uint64, opt engine.RunOptions) *engine.Result {
		calls.Add(1)
		var faults []engine.Fault
		if opt.Plan != nil {
			faults = opt.Plan.Faults
		} else {
			faults = []engine.Fault{{AtNS: int64(seed%9+1) * 1e8, Kind: engine.FaultCrash, Node: "server", RestartNS: 1e8}}
		}
		r := &engine.Result{Seed: seed, Verdict: engine.VerdictPass}
		tr := func(at int64, who, format string, a ...any) {
			r.Trace = append(r.Trace, fmt.Sprintf("%12s %s %s", time.Duration(at).String(), who, fmt.Sprintf(format, a...)))
		}
		var applied []engine.Fault
		t, inc := int64(0), 1
		next := 0 // next idle fault
		for inc <= 4 && t < 5e9 {
			tr(t, fmt.Sprintf("server#%d", inc), "start")
			crashed := false
			for n := int64(1); n <= 12 && !crashed; n++ {
				t += 1e7
				kind, path, site := "write", "/data/log", "log.go:10"
				switch {
				case n == 1:
					kind, path, site = "create", "/data/log", "log.go:3"
				case n%2 == 1:
					kind, site = "fsync", "log.go:12"
				}
				for _, f := range faults {
					if f.Kind == engine.FaultCrash && f.DiskOp == n && f.Incarnation == inc {
						tr(t, "fault", "crash server#%d during disk op #%d %s %s at %s", inc, n, kind, path, site)
						f.AtNS = t
						applied = append(applied, f)
						crashed = true
						if kind == "fsync" && inc >= 2 {
							r.Verdict = engine.VerdictFail
							r.Failure = &engine.Failure{Kind: "workload-exit", Reason: "acknowledged write lost", AtNS: t}
							r.Failure.Signature = engine.Signature(r)
						}
					}
				}
				if !crashed {
					tr(t, fmt.Sprintf("server#%d", inc), "disk #%d %s %s at %s", n, kind, path, site)
				}
				for next < len(faults) && faults[next].DiskOp == 0 && faults[next].AtNS <= t && !crashed {
					f := faults[next]
					next++
					if f.Kind == engine.FaultCrash {
						tr(t, "fault", "crash server#%d (idle)", inc)
						applied = append(applied, f)
						crashed = true
					}
				}
			}
			if r.Failed() {
				break
			}
			if !crashed {
				break
			}
			t += 1e8
			inc++
			tr(t, fmt.Sprintf("server#%d", inc), "| recovered")
		}
		r.Faults = applied
		if r.Faults == nil {
			r.Faults = []engine.Fault{}
		}
		r.EndNS = t
		return r
	}
}

func sequence(runs []Run) []string {
	var out []string
	for _, r := range runs {
		plan := "own"
		if r.Plan != nil {
			plan = fmt.Sprint(r.Plan.Faults)
		}
		out = append(out, fmt.Sprintf("%d %s seed %d parent %d plan %s -> %s", r.Index, r.Op, r.Seed, r.Parent, plan, r.Result.Verdict))
	}
	return out
}

func TestExploreIsDeterministic(t *testing.T) {
	var calls atomic.Int64
	run := func(seed uint64, workers int) []string {
		runs, _, err := Explore(context.Background(), Options{Runs: 60, Seed: seed, Batch: 4, Workers: workers, Run: fakeRun(&calls)})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 60 {
			t.Fatalf("%d runs, want the budget of 60", len(runs))
		}
		return sequence(runs)
	}
	a, b, c := run(7, 1), run(7, 4), run(8, 4)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("explorer seed 7 with 1 and 4 workers gave different runs:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("explorer seeds 7 and 8 gave the same runs")
	}
	if calls.Load() != 180 {
		t.Errorf("%d runs made, want 3×60", calls.Load())
	}
}

// TestExploreFindsWhatSeedsMiss: the fake bug needs a crash pinned to an fsync of a
// restarted server, which no seed's own plan has; with only fresh runs (the negative
// control, a random sweep) nothing fails, and exploration finds it within its budget.
func TestExploreFindsWhatSeedsMiss(t *testing.T) {
	var calls atomic.Int64
	_, st, err := Explore(context.Background(), Options{Runs: 200, Seed: 1, Fresh: 1, Run: fakeRun(&calls)})
	if err != nil {
		t.Fatal(err)
	}
	if st.Failed != 0 {
		t.Fatalf("fresh runs alone failed %d times: the fake bug is not out of the seeds' reach", st.Failed)
	}
	found := 0
	for seed := uint64(1); seed <= 5; seed++ {
		runs, st, err := Explore(context.Background(), Options{Runs: 200, Seed: seed, StopAtFailure: true, Run: fakeRun(&calls)})
		if err != nil {
			t.Fatal(err)
		}
		if st.FirstFailure == 0 {
			continue
		}
		found++
		r := runs[st.FirstFailure-1]
		if r.Plan == nil || !slices.ContainsFunc(r.Result.Faults, func(f engine.Fault) bool { return f.DiskOp > 0 && f.Incarnation >= 2 }) {
			t.Errorf("explorer seed %d: first failure %d (%s) has no crash pinned to a restarted life: %+v", seed, r.Index, r.Op, r.Result.Faults)
		}
		if len(runs) > st.FirstFailure+3 {
			t.Errorf("explorer seed %d: -stop ran %d runs past the first failure at %d, want at most the rest of its batch", seed, len(runs)-st.FirstFailure, st.FirstFailure)
		}
	}
	if found < 5 {
		t.Errorf("exploration found the bug with %d of 5 explorer seeds", found)
	}
}

func TestExploreOptions(t *testing.T) {
	var calls atomic.Int64
	if _, _, err := Explore(context.Background(), Options{Runs: 0, Run: fakeRun(&calls)}); err == nil {
		t.Errorf("a run budget of 0 was accepted")
	}
	if _, _, err := Explore(context.Background(), Options{Runs: 5}); err == nil {
		t.Errorf("no run function was accepted")
	}
}

func TestAnalyze(t *testing.T) {
	r := &engine.Result{
		Verdict: engine.VerdictFail,
		Failure: &engine.Failure{Kind: "workload-exit", Reason: "lost", Signature: "sig-1"},
		Properties: []engine.PropertyHit{
			{Name: "torn tail", Kind: engine.PropSometimes, Reached: true, Held: true},
			{Name: "well-formed", Kind: engine.PropAlways, Reached: true, Held: false},
			{Name: "never", Kind: engine.PropReachable},
		},
		// Lines as the engine writes them (kvlog's trace).
		Trace: []string{
			"          0s server#1 start",
			"         6µs server#1 disk #1 mkdir /data at kvlog/server/main.go:47",
			"  7.495075ms server#1 disk #4 write /data/kv.log @0+344 at kvlog/kvstore/kvstore.go:179",
			"  7.496075ms server#1 disk #5 fsync /data/kv.log at kvlog/kvstore/kvstore.go:138",
			"165.490424ms fault crash server#1 during disk op #24 write /data/kv.log @6192+1108 at kvlog/kvstore/kvstore.go:179 (976 of 1108 bytes written)",
			"165.490424ms fault server disk after crash: writes kept=1 dropped=0 torn=0 (bytes kept=0 lost=0) truncates kept=0 dropped=0",
			"218.476149ms net server:7000 refused client#1",
			"272.232402ms fault partition server <-> client for 790.427806ms",
			" 466.04072ms server#2 start",
			" 466.05072ms server#2 | recovered 10 records (torn tail: 976 bytes)",
			" 466.05172ms server#2 listen :7000 at kvlog/server/main.go:69",
			"  2.5334105s fault crash server#2 (idle)",
			"  2.9080867s server#3 start",
			"  2.9090867s server#3 | recovered 12 records (torn tail: 80 bytes)",
			"  3.1s server#3 disk #9 fsync /data/kv.log: EIO (injected)",
			"  3.5739134s client#1 exited with code 1",
			"  3.5739134s world FAIL client#1: lost",
		},
	}
	r.Coverage = &coverage.Coverage{Binaries: []coverage.Binary{{MetaHash: "m1", Mode: "count",
		Funcs: []coverage.Func{{Pkg: 0, Func: 3, Counters: []uint32{2, 0, 1}}}}}}
	a := Analyze(r)
	want := []string{
		"cov m1/0/3/0", "cov m1/0/3/2",
		"prop torn tail held", "prop well-formed violated", "prop never unreached", "fail sig-1",
		"disk mkdir /data kvlog/server/main.go:47",
		"disk write /data/kv.log kvlog/kvstore/kvstore.go:179",
		"crash during write /data/kv.log kvlog/kvstore/kvstore.go:179 (N of N bytes written)",
		"after crash writes kept>0",
		"fault partition",
		"crash idle server",
		"out server | recovered N records (torn tail: N bytes)",
		"out server | recovered N records (torn tail: N bytes) ×2",
		"after mid-op write (N of N bytes written) crash, server | recovered N records (torn tail: N bytes)",
		"after idle crash, server | recovered N records (torn tail: N bytes)",
		"lives server 3",
		"listen kvlog/server/main.go:69",
		"exit client exited with code N",
	}
	for _, w := range want {
		if !slices.Contains(a.Features, w) {
			t.Errorf("feature %q missing; have:\n%s", w, strings.Join(a.Features, "\n"))
		}
	}
	for _, f := range a.Features {
		if strings.Contains(f, "FAIL") || f == "cov m1/0/3/1" || strings.HasPrefix(f, "cov ") && strings.Contains(f, "×") || strings.Contains(f, "after crash torn") || strings.Contains(f, "after crash dropped") {
			t.Errorf("feature %q should not be there", f)
		}
	}
	if !slices.IsSorted(a.Features) {
		t.Errorf("features not sorted")
	}
	wantOps := []DiskOp{
		{AtNS: 6000, Node: "server", Incarnation: 1, N: 1, Class: "mkdir /data kvlog/server/main.go:47"},
		{AtNS: 7495075, Node: "server", Incarnation: 1, N: 4, Class: "write /data/kv.log kvlog/kvstore/kvstore.go:179"},
		{AtNS: 7496075, Node: "server", Incarnation: 1, N: 5, Class: "fsync /data/kv.log kvlog/kvstore/kvstore.go:138"},
	}
	if len(a.Ops) < 3 || !reflect.DeepEqual(a.Ops[:3], wantOps) {
		t.Errorf("ops %+v, want %+v first", a.Ops, wantOps)
	}
	// Same run, same features: the feature set is a function of the result.
	if b := Analyze(r); !reflect.DeepEqual(a, b) {
		t.Errorf("two analyses of one result differ")
	}
}
