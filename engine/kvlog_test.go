package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

var (
	kvMu   sync.Mutex
	kvSims = map[string]*engine.Sim{}
)

// kvlogSim prepares one of examples/kvlog's configs (a real build).
func kvlogSim(t *testing.T, file string) *engine.Sim {
	t.Helper()
	kvMu.Lock()
	defer kvMu.Unlock()
	if s := kvSims[file]; s != nil {
		return s
	}
	cfg, err := engine.LoadConfig(filepath.Join("..", "examples", "kvlog", file))
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kvSims[file] = s
	return s
}

func webConfig(serverDelay string) string {
	return fmt.Sprintf(`{
  "nodes": [{"name": "server", "pkg": "./guests/web", "args": ["server", %q]}],
  "workload": {"name": "client", "pkg": "./guests/web", "args": ["client"]},
  "horizon": "30s"
}`, serverDelay)
}

// TestNetHTTP runs a net/http server on sim.Listen and a client whose transport dials
// with sim.Dial: the client is refused while the server is not listening, then gets its
// answers; a partition stalls a request, which completes after the heal (without the
// partition, the same request is quick). Go's netpoller waits in poll_oneoff on the
// socket fds throughout. Runs of it replay identically (-check).
func TestNetHTTP(t *testing.T) {
	t.Parallel()
	s := prepared(t, "web.json", webConfig("300ms"))
	partition := &engine.FaultPlan{Faults: []engine.Fault{{
		AtNS: int64(time.Second), Kind: engine.FaultPartition, Node: "server", Peers: []string{"client"}, DurationNS: int64(2 * time.Second),
	}}}
	for _, tc := range []struct {
		name   string
		plan   *engine.FaultPlan
		stalls bool
	}{
		{"partition", partition, true},
		{"no faults", &engine.FaultPlan{Faults: []engine.Fault{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				r := runSeed(t, s, seed, tc.plan)
				if r.Verdict != engine.VerdictPass {
					t.Fatalf("seed %d: verdict %s (%v)\n%s", seed, r.Verdict, r.Failure, traceText(r))
				}
				out := output(r, "client#1")
				if len(out) < 4 {
					t.Fatalf("seed %d: client printed %q", seed, out)
				}
				if out[0] != "dial before listen: refused true" {
					t.Errorf("seed %d: %q, want the dial refused", seed, out[0])
				}
				if l, _ := traceLine(r, "net server:8080 refused client#1"); l == "" {
					t.Errorf("seed %d: no refusal in the trace", seed)
				}
				if out[1] != "GET /one: 200 hello /one from server#1" {
					t.Errorf("seed %d: first answer %q", seed, out[1])
				}
				if !strings.HasPrefix(out[2], "GET /two: 200 hello /two from server#1 took ") {
					t.Fatalf("seed %d: second answer %q", seed, out[2])
				}
				took, err := time.ParseDuration(strings.TrimPrefix(out[2], "GET /two: 200 hello /two from server#1 took "))
				if err != nil {
					t.Fatal(err)
				}
				_, heal := traceLine(r, "fault heal server")
				_, two := traceLine(r, "client#1 | GET /two")
				if tc.stalls {
					// The request starts at about 1.5s, inside the partition [1s, 3s).
					if took < 1400*time.Millisecond {
						t.Errorf("seed %d: request during the partition took %s, want it to wait for the heal", seed, took)
					}
					if heal < 0 || two < heal {
						t.Errorf("seed %d: the stalled request completed (line %d) before the heal (line %d)", seed, two, heal)
					}
				} else if took > 100*time.Millisecond {
					t.Errorf("seed %d: request without faults took %s", seed, took)
				}
				if out[len(out)-1] != "client done" {
					t.Errorf("seed %d: client ended with %q", seed, out[len(out)-1])
				}
			}
		})
	}
	t.Run("check", func(t *testing.T) {
		// net/http's goroutines, timers and connection pool replay identically.
		for seed := uint64(1); seed <= 3; seed++ {
			r := s.Run(context.Background(), seed, engine.RunOptions{Check: true, Plan: partition})
			if !r.Checked || r.Divergence != nil || r.Verdict != engine.VerdictPass {
				t.Errorf("seed %d: checked %v, verdict %s, divergence %+v", seed, r.Checked, r.Verdict, r.Divergence)
			}
		}
	})
}

// TestSweepWorkersAgree sweeps kvlog in this process with 1 and with 2 workers: every
// seed gets the same verdict and trace hash, and -check finds no divergence.
func TestSweepWorkersAgree(t *testing.T) {
	t.Parallel()
	s := kvlogSim(t, "seedfall.json")
	// 24 seeds around the first failing one, so that the comparison covers a failure.
	first := firstKvlogFailure(t).Seed
	var seeds []uint64
	for i := max(first, 13) - 12; len(seeds) < 24; i++ {
		seeds = append(seeds, i)
	}
	ctx := context.Background()
	one := s.Sweep(ctx, seeds, engine.SweepOptions{Workers: 1})
	two := s.Sweep(ctx, seeds, engine.SweepOptions{Workers: 2})
	if len(one) != len(seeds) || len(two) != len(seeds) {
		t.Fatalf("got %d and %d results for %d seeds", len(one), len(two), len(seeds))
	}
	failed := 0
	for i := range seeds {
		a, b := one[i], two[i]
		if a.Seed != seeds[i] || b.Seed != seeds[i] {
			t.Fatalf("results out of seed order: %d, %d, want %d", a.Seed, b.Seed, seeds[i])
		}
		if a.Verdict != b.Verdict || a.TraceHash != b.TraceHash || a.TraceLines != b.TraceLines {
			t.Errorf("seed %d: 1 worker %s %s, 2 workers %s %s", a.Seed, a.Verdict, a.TraceHash, b.Verdict, b.TraceHash)
		}
		if (a.Failure == nil) != (b.Failure == nil) || a.Failure != nil && a.Failure.Signature != b.Failure.Signature {
			t.Errorf("seed %d: failures differ: %v vs %v", a.Seed, a.Failure, b.Failure)
		}
		if a.Verdict == engine.VerdictFail {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("no seed of %v failed: the comparison never covered a failing run", seeds)
	}
	// Different seeds must give different traces, or equal hashes prove nothing.
	if one[0].TraceHash == one[1].TraceHash {
		t.Errorf("seeds %d and %d have the same trace hash", one[0].Seed, one[1].Seed)
	}
}

var kvFirstFailure struct {
	once sync.Once
	r    *engine.Result
}

// firstKvlogFailure returns the run, with its trace, of the lowest seed in 1-200 on which
// kvlog's buggy config fails.
func firstKvlogFailure(t *testing.T) *engine.Result {
	t.Helper()
	s := kvlogSim(t, "seedfall.json")
	kvFirstFailure.once.Do(func() {
		for seed := uint64(1); seed <= 200; seed++ {
			r := s.Run(context.Background(), seed, engine.RunOptions{Trace: true})
			if r.Verdict == engine.VerdictFail {
				kvFirstFailure.r = r
				return
			}
		}
	})
	if kvFirstFailure.r == nil {
		t.Fatal("no failing seed of examples/kvlog/seedfall.json in 1-200")
	}
	return kvFirstFailure.r
}

// TestReplayFaultPlanExactly replays a failing seed's applied faults as a plan: the
// trace is the same, line for line.
func TestReplayFaultPlanExactly(t *testing.T) {
	t.Parallel()
	s := kvlogSim(t, "seedfall.json")
	r := firstKvlogFailure(t)
	again := s.Run(context.Background(), r.Seed, engine.RunOptions{Trace: true, Plan: &engine.FaultPlan{Seed: r.Seed, Faults: r.Faults}})
	if again.TraceHash != r.TraceHash {
		n := min(len(r.Trace), len(again.Trace))
		for i := 0; i < n; i++ {
			if r.Trace[i] != again.Trace[i] {
				t.Fatalf("seed %d replayed from its plan diverges at line %d:\n  %s\n  %s", r.Seed, i+1, r.Trace[i], again.Trace[i])
			}
		}
		t.Fatalf("seed %d replayed from its plan: %d lines, then %d", r.Seed, len(r.Trace), len(again.Trace))
	}
	if again.Verdict != engine.VerdictFail || again.Failure.Signature != r.Failure.Signature {
		t.Errorf("replay verdict %s %v, want the original failure %v", again.Verdict, again.Failure, r.Failure)
	}
}
