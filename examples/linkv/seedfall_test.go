// Tests of the linkv example through the engine: the backup that serves stale reads is
// caught as not linearizable, with Porcupine's visualization written, and the correct
// server passes.
package linkv_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// wasm holds the modules built by the first prepare: both configs run the same
// packages (only the backup's args differ), so the second one skips the go build.
var wasm struct {
	sync.Mutex
	paths []string
}

func prepare(t *testing.T, path string) *engine.Sim {
	t.Helper()
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	wasm.Lock()
	defer wasm.Unlock()
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{Wasm: wasm.paths})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	wasm.paths = engineapi.WasmPaths(s)
	return s
}

func seedRange(lo, hi uint64) []uint64 {
	var out []uint64
	for s := lo; s <= hi; s++ {
		out = append(out, s)
	}
	return out
}

func TestStaleReadsAreNotLinearizable(t *testing.T) {
	s := prepare(t, "seedfall.stale.json")
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var found *engine.Result
	// Stop at the first failure; the rest of the 100 seeds is not needed.
	s.Sweep(ctx, seedRange(1, 100), engine.SweepOptions{RunOptions: engine.RunOptions{OutDir: out}, OnResult: func(r *engine.Result) {
		mu.Lock()
		defer mu.Unlock()
		if r.Failure != nil && r.Failure.Kind == "linearizability" && (found == nil || r.Seed < found.Seed) {
			found = r
			cancel()
		}
	}})
	if found == nil {
		t.Fatal("no seed of 1-100 caught the stale reads")
	}
	f := found.Failure
	t.Logf("seed %d: %s", found.Seed, f.Reason)
	if found.Verdict != engine.VerdictFail || !strings.Contains(f.Reason, "not linearizable (kv)") {
		t.Errorf("result %v; want a linearizability failure", found)
	}
	if f.Visualization == "" {
		t.Fatal("no visualization named in the failure")
	}
	if !strings.HasPrefix(f.Visualization, out) {
		t.Errorf("visualization %s is not in the out dir %s", f.Visualization, out)
	}
	data, err := os.ReadFile(f.Visualization)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ToLower(string(data)), "<html") {
		t.Errorf("visualization %s is not an HTML page", f.Visualization)
	}
	p := findProp(found, "linearizable (kv)")
	if p == nil || p.Kind != engine.PropAlways || p.Held {
		t.Errorf("linearizable (kv) property = %+v; want an always that did not hold", p)
	}

	// The same seed with the correct backup passes: the stale reads were the bug.
	ok := prepare(t, "seedfall.json").Run(context.Background(), found.Seed, engine.RunOptions{OutDir: t.TempDir()})
	if ok.Verdict != engine.VerdictPass {
		t.Errorf("correct server on seed %d: %v", found.Seed, ok)
	}
}

func TestCorrectServerIsLinearizable(t *testing.T) {
	s := prepare(t, "seedfall.json")
	n := uint64(100)
	if testing.Short() {
		n = 20
	}
	rs := s.Sweep(context.Background(), seedRange(1, n), engine.SweepOptions{RunOptions: engine.RunOptions{OutDir: t.TempDir()}})
	if len(rs) != int(n) {
		t.Fatalf("%d results for %d seeds", len(rs), n)
	}
	partitions := 0
	for _, r := range rs {
		if r.Verdict != engine.VerdictPass || r.LinUnknown {
			t.Errorf("%v (linearizability unknown: %v)", r, r.LinUnknown)
		}
		if p := findProp(r, "linearizable (kv)"); p == nil || !p.Held {
			t.Errorf("seed %d: linearizable (kv) = %+v", r.Seed, p)
		}
		for _, f := range r.Faults {
			if f.Kind == engine.FaultPartition {
				partitions++
			}
		}
	}
	if partitions < int(n)/2 {
		t.Errorf("only %d partitions in %d seeds: the sweep hardly tested anything", partitions, n)
	}
	ps := engine.AggregateProperties(rs)
	if len(ps) != 1 || ps[0].SeedsReached != int(n) || ps[0].SeedsTrue != int(n) || !ps[0].OK {
		t.Errorf("properties %+v; want linearizable (kv) true on all %d seeds", ps, n)
	}
}

func findProp(r *engine.Result, name string) *engine.PropertyHit {
	for i := range r.Properties {
		if r.Properties[i].Name == name {
			return &r.Properties[i]
		}
	}
	return nil
}
