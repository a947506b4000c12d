package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// TestMain lets the test binary stand in for `seedfall worker`: with
// SEEDFALL_WORKER_TEST_CONFIG set it serves the protocol for that config and the modules
// in SEEDFALL_WORKER_TEST_WASM.
func TestMain(m *testing.M) {
	if path := os.Getenv("SEEDFALL_WORKER_TEST_CONFIG"); path != "" {
		stallAnswer = os.Getenv("SEEDFALL_WORKER_TEST_STALL") == "1"
		cfg, err := engine.LoadConfig(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		sim, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{Wasm: strings.Split(os.Getenv("SEEDFALL_WORKER_TEST_WASM"), ",")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := Serve(context.Background(), sim, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPoolNeverDropsSeeds: workers that fail to start, or exit without answering (as a
// worker does after another seed's watchdog), never lose a seed: the seed is retried once
// on a fresh worker, and a seed no worker could run is a counted error, never missing.
func TestPoolNeverDropsSeeds(t *testing.T) {
	cfg, err := engine.ParseConfig([]byte(`{"workload": {"pkg": "./client"}, "watchdog": "5s"}`))
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in worker that answers one seed and exits, so the pool's idle worker is
	// dead when the next seed reaches it. (Requests are JSON lines such as
	// {"seed":3,"options":{}}; the seed is the only number in them.)
	once := `read l; s=$(printf %s "$l" | tr -cd 0-9); echo "{\"seed\":$s,\"verdict\":\"pass\",\"faults\":[],\"trace_hash\":\"h$s\"}"`
	var mu sync.Mutex
	starts := 0
	p := NewPool(cfg, Options{
		Workers: 2, Grace: time.Second,
		Command: func() *exec.Cmd {
			mu.Lock()
			defer mu.Unlock()
			starts++
			if starts%3 == 0 { // every third start fails
				return exec.Command(filepath.Join(t.TempDir(), "no-such-worker"))
			}
			return exec.Command("sh", "-c", once)
		},
	})
	res, err := p.Sweep(context.Background(), []uint64{1, 2, 3, 4, 5, 6}, engine.RunOptions{}, nil)
	p.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := verdicts(res), []string{"1:pass", "2:pass", "3:pass", "4:pass", "5:pass", "6:pass"}; !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}

	// No worker can start at all: every seed is a counted error... and with nothing else
	// to report, Sweep returns the error.
	p = NewPool(cfg, Options{
		Workers: 2,
		Command: func() *exec.Cmd { return exec.Command(filepath.Join(t.TempDir(), "no-such-worker")) },
	})
	defer p.Close()
	res, err = p.Sweep(context.Background(), []uint64{1, 2, 3}, engine.RunOptions{}, nil)
	if err == nil || !strings.Contains(err.Error(), "could not start a worker process") {
		t.Errorf("no worker could start: err %v, results %d", err, len(res))
	}
	// Run alone reports it as the seed's error.
	if r := p.Run(context.Background(), 9, engine.RunOptions{}); r.Verdict != engine.VerdictError || !strings.Contains(r.Error, "could not start a worker process") {
		t.Errorf("Run with no worker: %s %q", r.Verdict, r.Error)
	}
}

// TestPoolKillsHungWorker: a worker process that never answers for one seed is killed
// after the pool's limit (the watchdog's run cap and the grace), that seed counts as
// watchdog, and the sweep goes on with a fresh worker for the others.
func TestPoolKillsHungWorker(t *testing.T) {
	t.Parallel()
	cfg, err := engine.ParseConfig([]byte(`{"workload": {"pkg": "./client"}, "watchdog": "100ms"}`))
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in worker: it answers every seed but 3, on which it hangs.
	script := `while read l; do s=$(printf %s "$l" | tr -cd 0-9); if [ "$s" = 3 ]; then exec sleep 600; fi; echo "{\"seed\":$s,\"verdict\":\"pass\",\"faults\":[],\"trace_hash\":\"h$s\"}"; done`
	var starts int
	var mu sync.Mutex
	p := NewPool(cfg, Options{
		Workers: 1,
		Grace:   time.Second,
		Command: func() *exec.Cmd {
			mu.Lock()
			starts++
			mu.Unlock()
			return exec.Command("sh", "-c", script)
		},
	})
	defer p.Close()
	res, err := p.Sweep(context.Background(), []uint64{1, 2, 3, 4, 5}, engine.RunOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := verdicts(res), []string{"1:pass", "2:pass", "3:watchdog", "4:pass", "5:pass"}; !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
	if starts != 2 {
		t.Errorf("%d workers started, want 2 (the hung one replaced once)", starts)
	}
	if r := res[2]; r.Failure == nil || !strings.Contains(r.Failure.Reason, "seed 3: worker stopped after") || r.Failure.Signature == "" {
		t.Errorf("watchdog result %+v lacks a reason naming the seed or a signature", r.Failure)
	}
}

// TestRequestCarriesEveryOption: every option of a run crosses the process boundary.
// (The -out visualizations were once lost this way: the protocol had its own request
// type without OutDir.) A field that cannot cross must be marked json:"-", or encoding
// fails here.
func TestRequestCarriesEveryOption(t *testing.T) {
	opt := engine.RunOptions{
		Plan:       &engine.FaultPlan{Seed: 7, Faults: []engine.Fault{{Kind: engine.FaultCrash, AtNS: 5, Node: "n"}}},
		Trace:      true,
		Mutation:   "no-fsync",
		Check:      true,
		ReseedAt:   11,
		FutureSeed: 13,
		OutDir:     "out/dir",
		TraceHook:  func(string) {},
		OnWatchdog: func() {},
	}
	line, err := json.Marshal(Request{Seed: 3, Options: opt})
	if err != nil {
		t.Fatal(err)
	}
	var back Request
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	opt.TraceHook, opt.OnWatchdog = nil, nil
	if back.Seed != 3 || !reflect.DeepEqual(back.Options, opt) {
		t.Errorf("request %s came back as %+v, want %+v", line, back.Options, opt)
	}
	// Every field that is not a function or the profiler has a value above, so a new
	// option that is left at its zero value here is caught.
	v := reflect.ValueOf(opt)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Tag.Get("json") != "-" && v.Field(i).IsZero() {
			t.Errorf("RunOptions.%s has no value in this test: give it one", f.Name)
		}
	}
}

func verdicts(res []*engine.Result) []string {
	var out []string
	for _, r := range res {
		out = append(out, fmt.Sprintf("%d:%s", r.Seed, r.Verdict))
	}
	return out
}

// spinPool prepares the basic test guest in a config whose workload spins on seed 2,
// and returns a pool of this test binary serving it (stall: the worker's run cannot
// report after the watchdog).
func spinPool(t *testing.T, stall bool) *Pool {
	t.Helper()
	guests, err := filepath.Abs("../../engine/testdata")
	if err != nil {
		t.Fatal(err)
	}
	text := `{"workload": {"name": "client", "pkg": "./guests/basic", "args": ["spin", "2"]}, "watchdog": "1s"}`
	path := filepath.Join(t.TempDir(), "seedfall.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.ParseConfig([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir, cfg.Path = guests, path
	sim, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	env := append(os.Environ(), "SEEDFALL_WORKER_TEST_CONFIG="+path, "SEEDFALL_WORKER_TEST_WASM="+strings.Join(engineapi.WasmPaths(sim), ","))
	if stall {
		env = append(env, "SEEDFALL_WORKER_TEST_STALL=1")
	}
	p := NewPool(cfg, Options{
		Workers: 1,
		// A limit far beyond the answer after a notice (one budget): a plain timeout would
		// show in the reason.
		Grace: 2 * time.Minute,
		Command: func() *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = env
			return cmd
		},
	})
	t.Cleanup(p.Close)
	return p
}

// TestWatchdogAnswers: a guest that spins in a worker process is answered for as
// "watchdog" by the worker itself, with its node, and the next seed runs on a fresh
// worker. When the run cannot report after its watchdog (a garbage collection under way
// when the guest began to spin blocks it for good), the worker's notice that the
// watchdog fired lets the pool stop it one budget later, instead of waiting out its
// limit (here 2 minutes more); the signature is the same.
func TestWatchdogAnswers(t *testing.T) {
	t.Parallel()
	for _, stall := range []bool{false, true} {
		p := spinPool(t, stall)
		res, err := p.Sweep(context.Background(), []uint64{1, 2, 3}, engine.RunOptions{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := verdicts(res), []string{"1:pass", "2:watchdog", "3:pass"}; !slices.Equal(got, want) {
			t.Fatalf("stall %v: results %v, want %v (%v)", stall, got, want, res)
		}
		f := res[1].Failure
		t.Logf("stall %v: %s", stall, f.Reason)
		switch {
		case !stall && (f.Node != "client#1" || strings.Contains(f.Reason, "worker")):
			t.Errorf("the run's own watchdog answer: node %q, reason %q", f.Node, f.Reason)
		case stall && !strings.Contains(f.Reason, "could not report it within 1s"):
			t.Errorf("stalled run: reason %q is not the one after a notice", f.Reason)
		}
		if want := failed(2, engine.VerdictWatchdog, "").Failure.Signature; f.Signature != want {
			t.Errorf("stall %v: signature %s, want the watchdog's %s", stall, f.Signature, want)
		}
	}
}
