// Acceptance tests of the engine core, through real wasm guests: the disk model, the
// network, determinism and bad input. The guests live in testdata/guests and are built
// for wasip1 once per test process; each config gets one prepared Sim, shared by its
// subtests.
package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// ---- shared machinery ----

var (
	wasmMu    sync.Mutex
	wasmByPkg = map[string]string{} // guest package dir -> built module
	simMu     sync.Mutex
	simByName = map[string]*engine.Sim{}
)

// guestModule builds the guest package (a path relative to testdata, "./guests/basic")
// for wasip1 once per process and returns the module file.
func guestModule(t *testing.T, dir, pkg string) string {
	t.Helper()
	key := filepath.Join(dir, pkg)
	wasmMu.Lock()
	defer wasmMu.Unlock()
	if p, ok := wasmByPkg[key]; ok {
		return p
	}
	cfg, err := engine.ParseConfig([]byte(fmt.Sprintf(`{"workload": {"name": "client", "pkg": %q}}`, pkg)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dir, cfg.Path = dir, filepath.Join(dir, "build.json")
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatalf("build %s: %v", pkg, err)
	}
	p := s.WasmPaths()[0]
	s.Close()
	wasmByPkg[key] = p
	return p
}

// prepared returns the Sim of a config, preparing it on first use with the shared
// builds. name identifies the config: a file under testdata ("disk.json"), or, with
// text set, an inline config that the tests name.
func prepared(t *testing.T, name, text string) *engine.Sim {
	t.Helper()
	simMu.Lock()
	s := simByName[name]
	simMu.Unlock()
	if s != nil {
		return s
	}
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var cfg *engine.Config
	if text == "" {
		if cfg, err = engine.LoadConfig(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	} else {
		if cfg, err = engine.ParseConfig([]byte(text)); err != nil {
			t.Fatalf("config %s: %v", name, err)
		}
		cfg.Dir, cfg.Path = dir, filepath.Join(dir, name)
	}
	var wasm []string
	for _, n := range cfg.AllNodes() {
		wasm = append(wasm, guestModule(t, cfg.Dir, n.Pkg))
	}
	s, err = engine.Prepare(context.Background(), cfg, engine.PrepareOptions{Wasm: wasm})
	if err != nil {
		t.Fatal(err)
	}
	simMu.Lock()
	defer simMu.Unlock()
	if old := simByName[name]; old != nil {
		s.Close()
		return old
	}
	simByName[name] = s
	return s
}

// basicConfig is an inline config: nodes (made by basicNode), the last of which is the
// workload, and extra top-level fields ("horizon": "5s").
func basicConfig(extra string, nodes ...string) string {
	if extra != "" {
		extra = ",\n" + extra
	}
	last := len(nodes) - 1
	return fmt.Sprintf(`{"nodes": [%s], "workload": %s%s}`, strings.Join(nodes[:last], ", "), nodes[last], extra)
}

// basicNode is a node running the basic guest with args (its mode first).
func basicNode(name string, args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return fmt.Sprintf(`{"name": %q, "pkg": "./guests/basic", "args": [%s]}`, name, strings.Join(q, ", "))
}

// runSeed runs one seed with the trace kept.
func runSeed(t *testing.T, s *engine.Sim, seed uint64, plan *engine.FaultPlan) *engine.Result {
	t.Helper()
	r := s.Run(context.Background(), seed, engine.RunOptions{Trace: true, Plan: plan})
	if r.Verdict == engine.VerdictError {
		t.Fatalf("seed %d: run error: %s", seed, r.Error)
	}
	return r
}

// output returns the lines an incarnation ("n#2") printed, without the trace prefix.
// label may be a node name alone ("n"), which matches every incarnation.
func output(r *engine.Result, label string) []string {
	var out []string
	for _, l := range r.Trace {
		_, rest, ok := strings.Cut(l, " | ")
		if !ok {
			continue
		}
		who := strings.Fields(strings.TrimSpace(l[:len(l)-len(rest)-3]))
		if len(who) < 2 {
			continue
		}
		w := who[len(who)-1]
		if w == label || strings.HasPrefix(w, label+"#") {
			out = append(out, rest)
		}
	}
	return out
}

func traceText(r *engine.Result) string { return strings.Join(r.Trace, "\n") }

// traceLine returns the first trace line containing s, and its index.
func traceLine(r *engine.Result, s string) (string, int) {
	for i, l := range r.Trace {
		if strings.Contains(l, s) {
			return l, i
		}
	}
	return "", -1
}

func crashAt(node string, at, restart time.Duration) *engine.FaultPlan {
	return &engine.FaultPlan{Faults: []engine.Fault{{AtNS: int64(at), Kind: engine.FaultCrash, Node: node, RestartNS: int64(restart)}}}
}

func crashDuringOp(node string, op int64, restart time.Duration) *engine.FaultPlan {
	return &engine.FaultPlan{Faults: []engine.Fault{{Kind: engine.FaultCrash, Node: node, DiskOp: op, Incarnation: 1, RestartNS: int64(restart)}}}
}

// ---- disk model ----

// The disk guest writes 32 synced bytes and then 64 unsynced bytes to /d/f and idles;
// its second incarnation prints "read <len> <content>".
var (
	syncedData   = "SYNCED-" + strings.Repeat("s", 25)
	unsyncedData = "UNSYNCED-" + strings.Repeat("u", 55)
)

const diskSeeds = 40

// The writes are a few dozen bytes, inside one sector: tear_unit 1 lets them tear at
// any byte (TestFaultTearUnit covers sector tears).
func diskConfig(torn bool, mode string) string {
	return basicConfig(fmt.Sprintf(`"faults": {"torn_writes": %v, "tear_unit": 1}, "horizon": "10s"`, torn),
		basicNode("n", mode, "/d"), basicNode("client", "idle", "2s"))
}

var readLine = regexp.MustCompile(`^read (\d+) "(.*)"$`)

// recovered runs seed under plan and returns what the restarted node read back.
func recovered(t *testing.T, s *engine.Sim, seed uint64, plan *engine.FaultPlan) (string, *engine.Result) {
	t.Helper()
	r := runSeed(t, s, seed, plan)
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("seed %d: verdict %s (%v), want pass\n%s", seed, r.Verdict, r.Failure, traceText(r))
	}
	lines := output(r, "n#2")
	if len(lines) != 1 {
		t.Fatalf("seed %d: n#2 printed %q, want one read line\n%s", seed, lines, traceText(r))
	}
	m := readLine.FindStringSubmatch(lines[0])
	if m == nil {
		t.Fatalf("seed %d: n#2 printed %q, want a read line", seed, lines[0])
	}
	content, err := strconv.Unquote(`"` + m[2] + `"`)
	if err != nil {
		t.Fatal(err)
	}
	if strconv.Itoa(len(content)) != m[1] {
		t.Fatalf("seed %d: %q: length %s, content %d bytes", seed, lines[0], m[1], len(content))
	}
	return content, r
}

// classify says what a crash left of the unsynced write: "all", "none", or "torn".
// It fails the test if the synced data is damaged or the rest is not a prefix.
func classify(t *testing.T, seed uint64, got string) string {
	t.Helper()
	if !strings.HasPrefix(got, syncedData) {
		t.Fatalf("seed %d: synced data lost or damaged: read %q", seed, got)
	}
	rest := got[len(syncedData):]
	if !strings.HasPrefix(unsyncedData, rest) {
		t.Fatalf("seed %d: after the synced data, %q is not a prefix of the unsynced write", seed, rest)
	}
	switch len(rest) {
	case 0:
		return "none"
	case len(unsyncedData):
		return "all"
	}
	return "torn"
}

// TestDiskCrashIdle crashes the node while it idles after writing: the synced data
// always survives, the unsynced write survives whole or not at all, and a torn prefix
// appears only with torn_writes.
func TestDiskCrashIdle(t *testing.T) {
	t.Parallel()
	plan := crashAt("n", 500*time.Millisecond, 100*time.Millisecond)
	for _, torn := range []bool{false, true} {
		t.Run(fmt.Sprintf("torn_writes=%v", torn), func(t *testing.T) {
			s := prepared(t, fmt.Sprintf("disk-torn-%v.json", torn), diskConfig(torn, "disk"))
			seen := map[string][]uint64{}
			for seed := uint64(1); seed <= diskSeeds; seed++ {
				got, r := recovered(t, s, seed, plan)
				if l, _ := traceLine(r, "crash n#1 (idle)"); l == "" {
					t.Fatalf("seed %d: no idle crash in the trace", seed)
				}
				k := classify(t, seed, got)
				seen[k] = append(seen[k], seed)
			}
			t.Logf("outcomes of the unsynced write over %d seeds: %v", diskSeeds, seen)
			if len(seen["none"]) == 0 {
				t.Errorf("unsynced data survived every crash: the crash does not drop pending writes")
			}
			if len(seen["all"]) == 0 {
				t.Errorf("unsynced data never survived a crash: pending writes are always dropped")
			}
			if torn && len(seen["torn"]) == 0 {
				t.Errorf("torn_writes: no seed kept a torn prefix of the pending write")
			}
			if !torn && len(seen["torn"]) > 0 {
				t.Errorf("torn prefixes without torn_writes on seeds %v", seen["torn"])
			}
		})
	}
}

// TestDiskSyncedSurvivesNegativeControl runs the idle crash under the fsync-noop
// mutation of the simulated OS: the check that synced data survives must then fail for
// some seed, or it checks nothing.
func TestDiskSyncedSurvivesNegativeControl(t *testing.T) {
	t.Parallel()
	s := prepared(t, "disk-torn-true.json", diskConfig(true, "disk"))
	plan := crashAt("n", 500*time.Millisecond, 100*time.Millisecond)
	var lost []uint64
	for seed := uint64(1); seed <= 20; seed++ {
		r := s.Run(context.Background(), seed, engine.RunOptions{Trace: true, Plan: plan, Mutation: engine.MutFsyncNoop})
		out := output(r, "n#2")
		if len(out) != 1 {
			t.Fatalf("seed %d: n#2 printed %q", seed, out)
		}
		if !strings.Contains(out[0], syncedData) {
			lost = append(lost, seed)
		}
	}
	if len(lost) == 0 {
		t.Fatal("with fsync a no-op, the synced data still survived every crash")
	}
	t.Logf("fsync-noop: synced data lost on seeds %v", lost)
}

// TestDiskOpNumbering: without faults, every mutating or syncing call is one numbered
// disk op of the incarnation, in order, in the trace.
func TestDiskOpNumbering(t *testing.T) {
	t.Parallel()
	s := prepared(t, "disk-torn-true.json", diskConfig(true, "disk"))
	r := runSeed(t, s, 1, &engine.FaultPlan{Faults: []engine.Fault{}})
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("verdict %s (%v)", r.Verdict, r.Failure)
	}
	want := []string{"mkdir /d", "create /d/f", "write /d/f @0+32", "fsync /d/f", "write /d/f @32+64"}
	var got []string
	for _, l := range r.Trace {
		if i := strings.Index(l, " n#1 disk #"); i >= 0 {
			f := strings.SplitN(l[i+len(" n#1 disk #"):], " ", 2)
			// The op may carry the guest's source location: "… at guests/basic/main.go:176".
			op, loc, ok := strings.Cut(f[1], " at ")
			if ok && !strings.HasPrefix(loc, "guests/basic/main.go:") {
				t.Errorf("disk op %q: location %q is not in the guest's source", op, loc)
			}
			got = append(got, op)
			if f[0] != strconv.Itoa(len(got)) {
				t.Errorf("disk op %q numbered %s, want %d", f[1], f[0], len(got))
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("disk ops %q, want %q", got, want)
	}
	if out := output(r, "n"); !slices.Equal(out, []string{"written"}) {
		t.Errorf("n printed %q", out)
	}
}

// TestDiskCrashDuringOp crashes the node during a numbered disk op. The trace names the
// op; op N applies only partially (a torn prefix with torn_writes, nothing without); the
// guest never returns from it; the restarted incarnation sees the synced data and a
// prefix of op N.
func TestDiskCrashDuringOp(t *testing.T) {
	t.Parallel()
	for _, torn := range []bool{false, true} {
		t.Run(fmt.Sprintf("write/torn_writes=%v", torn), func(t *testing.T) {
			s := prepared(t, fmt.Sprintf("diskops-torn-%v.json", torn), diskConfig(torn, "diskops"))
			plan := crashDuringOp("n", 5, 100*time.Millisecond)
			partial := regexp.MustCompile(`fault crash n#1 during disk op #5 write /d/f @32\+64( at guests/basic/main\.go:\d+)? \((\d+) of 64 bytes written\)$`)
			seen := map[string][]uint64{}
			for seed := uint64(1); seed <= diskSeeds; seed++ {
				got, r := recovered(t, s, seed, plan)
				l, _ := traceLine(r, "during disk op #5")
				m := partial.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("seed %d: trace line %q, want the crash during op #5 with the bytes written", seed, l)
				}
				written, _ := strconv.Atoi(m[2])
				if written >= 64 || (!torn && written != 0) {
					t.Errorf("seed %d: %d of 64 bytes of the interrupted write applied", seed, written)
				}
				if out := output(r, "n#1"); !slices.Equal(out, []string{"after op 3", "after op 4"}) {
					t.Errorf("seed %d: n#1 printed %q: it must stop inside op #5", seed, out)
				}
				k := classify(t, seed, got)
				if k == "all" {
					t.Errorf("seed %d: the interrupted write survived whole", seed)
				}
				if rest := len(got) - len(syncedData); rest > written {
					t.Errorf("seed %d: %d bytes of the write survived, but only %d were written before the crash", seed, rest, written)
				}
				if len(r.Faults) != 1 || r.Faults[0].DiskOp != 5 || r.Faults[0].Incarnation != 1 {
					t.Errorf("seed %d: applied faults %+v, want the crash during op #5 of incarnation 1", seed, r.Faults)
				}
				seen[k] = append(seen[k], seed)
			}
			t.Logf("outcomes over %d seeds: %v", diskSeeds, seen)
			if torn && len(seen["torn"]) == 0 {
				t.Errorf("torn_writes: no seed kept a torn prefix of the interrupted write")
			}
			if !torn && len(seen["torn"]) > 0 {
				t.Errorf("torn prefixes without torn_writes on seeds %v", seen["torn"])
			}
		})
	}
	t.Run("fsync", func(t *testing.T) {
		// A crash during the first fsync (op #4): the synced write may or may not have
		// become durable, but what survives is a prefix of it, never more.
		s := prepared(t, "diskops-torn-true.json", diskConfig(true, "diskops"))
		plan := crashDuringOp("n", 4, 100*time.Millisecond)
		lens := map[int]bool{}
		for seed := uint64(1); seed <= 20; seed++ {
			got, r := recovered(t, s, seed, plan)
			if l, _ := traceLine(r, "fault crash n#1 during disk op #4 fsync /d/f"); l == "" {
				t.Fatalf("seed %d: no crash during op #4 in the trace\n%s", seed, traceText(r))
			}
			if !strings.HasPrefix(syncedData, got) {
				t.Fatalf("seed %d: read %q, want a prefix of the synced write", seed, got)
			}
			lens[len(got)] = true
		}
		if !lens[len(syncedData)] {
			t.Errorf("the fsync interrupted by the crash never took effect in 20 seeds (lengths %v)", lens)
		}
	})
}

// TestDiskNegativeControl: a kvlog server that acknowledges before fsync must be
// caught within 100 seeds.
func TestDiskNegativeControl(t *testing.T) {
	t.Parallel()
	s := kvlogSim(t, "seedfall.nosync.json")
	for seed := uint64(1); seed <= 100; seed++ {
		r := s.Run(context.Background(), seed, engine.RunOptions{})
		if r.Verdict == engine.VerdictFail {
			if !strings.Contains(r.Failure.Reason, "acknowledged write lost") {
				t.Fatalf("seed %d failed for another reason: %s", seed, r.Failure.Reason)
			}
			t.Logf("caught on seed %d: %s", seed, r.Failure.Reason)
			return
		}
	}
	t.Fatal("the server that acknowledges before fsync passed 100 seeds")
}

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

// ---- network ----

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

// ---- determinism ----

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

// ---- bad input ----

// TestBadConfig checks that malformed configs are errors naming the file and the field.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	const ok = `"workload": {"pkg": "./client"}`
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"unknown field", `{` + ok + `, "nodez": []}`, []string{"field nodez: unknown field"}},
		{"unknown node field", `{"nodes": [{"name": "s", "pkg": "./s", "argz": []}], ` + ok + `}`, []string{"field nodes[0].argz: unknown field"}},
		{"unknown fault field", `{` + ok + `, "faults": {"crash_per_minute": 1}}`, []string{"field faults.crash_per_minute: unknown field"}},
		{"bad type", `{` + ok + `, "faults": {"crash_per_sec": "fast"}}`, []string{"faults.crash_per_sec"}},
		{"bad type in node", `{"nodes": [{"name": "s", "pkg": "./s", "args": "-x"}], ` + ok + `}`, []string{"args"}},
		{"bad duration", `{` + ok + `, "horizon": "5 parsecs"}`, []string{"horizon", "5 parsecs"}},
		{"bad duration type", `{` + ok + `, "horizon": true}`, []string{"horizon"}},
		{"bad nested duration", `{` + ok + `, "faults": {"restart_delay": "soon"}}`, []string{"faults.restart_delay", "soon"}},
		{"negative duration", `{` + ok + `, "watchdog": "-5s"}`, []string{"watchdog", "negative"}},
		{"bad rate", `{` + ok + `, "faults": {"crash_per_sec": -1}}`, []string{"faults.crash_per_sec"}},
		{"bad probability", `{` + ok + `, "faults": {"fsync_eio": 1.5}}`, []string{"faults.fsync_eio"}},
		{"bad node name", `{"nodes": [{"name": "Server", "pkg": "./s"}], ` + ok + `}`, []string{"nodes[0].name"}},
		{"duplicate node", `{"nodes": [{"name": "s", "pkg": "./s"}, {"name": "s", "pkg": "./s"}], ` + ok + `}`, []string{"nodes[1].name", "duplicate"}},
		{"missing workload", `{"nodes": [{"name": "s", "pkg": "./s"}]}`, []string{"workload.pkg"}},
		{"memory limit", `{` + ok + `, "memory_limit_mib": 5000}`, []string{"memory_limit_mib"}},
		{"tear unit not a power of two", `{` + ok + `, "faults": {"tear_unit": 500}}`, []string{"field faults.tear_unit", "500"}},
		{"tear unit negative", `{` + ok + `, "faults": {"tear_unit": -512}}`, []string{"field faults.tear_unit"}},
		{"tear unit too large", `{` + ok + `, "faults": {"tear_unit": 4194304}}`, []string{"field faults.tear_unit"}},
		{"disk limit", `{` + ok + `, "disk_limit_mib": -1}`, []string{"field disk_limit_mib"}},
		{"file limit", `{` + ok + `, "file_limit_mib": 100000}`, []string{"field file_limit_mib"}},
		{"syntax", "{\n" + ok + ",\n}", []string{"line 3"}},
		{"trailing data", `{` + ok + `} {}`, []string{"trailing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad-config.json")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := engine.LoadConfig(path)
			if err == nil {
				t.Fatalf("config %s loaded without error", tc.text)
			}
			for _, w := range append([]string{path}, tc.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// The control: the same file without the mistake loads.
	path := filepath.Join(t.TempDir(), "good.json")
	os.WriteFile(path, []byte(`{`+ok+`, "horizon": "5s", "faults": {"crash_per_sec": 0.5, "restart_delay": "100ms"}}`), 0o644)
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		t.Fatalf("good config: %v", err)
	}
	if time.Duration(cfg.Horizon) != 5*time.Second || time.Duration(cfg.Faults.RestartDelay) != 100*time.Millisecond {
		t.Errorf("good config read as horizon %v restart_delay %v", time.Duration(cfg.Horizon), time.Duration(cfg.Faults.RestartDelay))
	}
}

// TestBuildError: a node package that does not compile is a *BuildError naming the node
// and carrying the compiler's output.
func TestBuildError(t *testing.T) {
	t.Parallel()
	cfg, err := engine.LoadConfig(filepath.Join("testdata", "broken.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	var be *engine.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Prepare: %v (%T), want a *engine.BuildError", err, err)
	}
	if be.Node != "server" {
		t.Errorf("BuildError.Node = %q, want server", be.Node)
	}
	for _, w := range []string{"main.go", "cannot use"} {
		if !strings.Contains(be.Output, w) {
			t.Errorf("compiler output %q does not contain %q", be.Output, w)
		}
	}
	if !strings.Contains(err.Error(), `"server"`) {
		t.Errorf("error %q does not name the node", err)
	}
}

// TestGuestFailures covers guests that go wrong: each is a result, never a host error or
// a hang.
func TestGuestFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		config  string
		verdict engine.Verdict
		check   func(t *testing.T, r *engine.Result)
	}{
		{
			name:    "server panics",
			config:  basicConfig(`"horizon": "10s"`, basicNode("server", "panic"), basicNode("client", "idle", "5s")),
			verdict: engine.VerdictFail,
			check: func(t *testing.T, r *engine.Result) {
				if r.Failure.Kind != "node-exit" || r.Failure.Node != "server#1" {
					t.Errorf("failure %+v, want node-exit of server#1", r.Failure)
				}
				if !strings.Contains(r.Failure.Reason, "exit_code(2)") {
					t.Errorf("reason %q does not give the exit code", r.Failure.Reason)
				}
				if l, _ := traceLine(r, "server#1 | panic: boom: the server gave up"); l == "" {
					t.Errorf("no panic text in the trace:\n%s", traceText(r))
				}
				if l, _ := traceLine(r, "server#1 exited with code 2"); l == "" {
					t.Errorf("no exit line in the trace")
				}
			},
		},
		{
			name:    "server exits non-zero",
			config:  basicConfig(`"horizon": "10s"`, basicNode("server", "exit", "5"), basicNode("client", "idle", "1s")),
			verdict: engine.VerdictFail,
			check: func(t *testing.T, r *engine.Result) {
				if !strings.Contains(r.Failure.Reason, "server#1 crashed: exit_code(5)") {
					t.Errorf("reason %q", r.Failure.Reason)
				}
			},
		},
		{
			name:    "server exits zero",
			config:  basicConfig(`"horizon": "10s"`, basicNode("server", "exit", "0"), basicNode("client", "idle", "1s")),
			verdict: engine.VerdictPass,
		},
		{
			name:    "workload sleeps forever",
			config:  basicConfig(`"horizon": "5s", "liveness": {"horizon": "count"}`, basicNode("client", "sleep-forever")),
			verdict: engine.VerdictHorizon,
			check: func(t *testing.T, r *engine.Result) {
				if r.EndNS != int64(5*time.Second) || r.Failure != nil {
					t.Errorf("ended at %s with failure %v, want the 5s horizon and no failure", engine.FormatDuration(r.EndNS), r.Failure)
				}
			},
		},
		{
			name:    "workload blocks forever",
			config:  basicConfig(`"horizon": "5s", "liveness": {"horizon": "count"}`, basicNode("client", "block-forever")),
			verdict: engine.VerdictHorizon,
			check: func(t *testing.T, r *engine.Result) {
				if l, _ := traceLine(r, "nothing left to run"); l == "" {
					t.Errorf("trace does not say why the run stopped:\n%s", traceText(r))
				}
			},
		},
		{
			name:    "workload exits non-zero",
			config:  basicConfig(`"horizon": "5s"`, basicNode("client", "exit", "3")),
			verdict: engine.VerdictFail,
			check: func(t *testing.T, r *engine.Result) {
				if r.Failure.Kind != "workload-exit" {
					t.Errorf("failure %+v", r.Failure)
				}
				if l, _ := traceLine(r, "client#1 exited with code 3"); l == "" {
					t.Errorf("no exit code in the trace")
				}
			},
		},
		{
			name:    "stdout flood",
			config:  basicConfig(`"horizon": "5s", "output_limit_kib": 64`, basicNode("client", "flood", "50000")),
			verdict: engine.VerdictPass,
			check: func(t *testing.T, r *engine.Result) {
				if l, _ := traceLine(r, "client#1 output limit of 64 KiB reached"); l == "" {
					t.Errorf("no output limit line in the trace")
				}
				if n := len(output(r, "client")); n < 500 || n > 700 {
					t.Errorf("%d output lines kept, want about 64 KiB of 110-byte lines", n)
				}
				if l, _ := traceLine(r, "flood done"); l != "" {
					t.Errorf("output past the limit reached the trace: %q", l)
				}
			},
		},
		{
			// One write of about 1.3 MiB: the limit cuts it, and the lines before the cut
			// reach the trace.
			name:    "stdout flood in one write",
			config:  basicConfig(`"horizon": "5s"`, basicNode("client", "flood", "12000", "one-write")),
			verdict: engine.VerdictPass,
			check: func(t *testing.T, r *engine.Result) {
				if l, _ := traceLine(r, "client#1 output limit of 1024 KiB reached"); l == "" {
					t.Errorf("no output limit line in the trace")
				}
				out := output(r, "client")
				if n := len(out); n < 9000 || n > 10000 {
					t.Errorf("%d output lines kept, want about 1 MiB of 110-byte lines", n)
				}
				if out[0] != "flood 0 "+strings.Repeat("x", 100) {
					t.Errorf("first line %q", out[0])
				}
			},
		},
		{
			name:    "unbounded allocation",
			config:  basicConfig(`"horizon": "60s", "memory_limit_mib": 64`, basicNode("client", "alloc")),
			verdict: engine.VerdictFail,
			check: func(t *testing.T, r *engine.Result) {
				if !strings.Contains(traceText(r), "out of memory") {
					t.Errorf("trace does not say out of memory:\n%s", strings.Join(r.Trace[max(0, len(r.Trace)-10):], "\n"))
				}
				if l, _ := traceLine(r, "client#1 exited with code 2"); l == "" {
					t.Errorf("no exit line")
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := prepared(t, "failures-"+tc.name+".json", tc.config)
			start := time.Now()
			r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
			if r.Verdict != tc.verdict {
				t.Fatalf("verdict %s (%v), want %s\n%s", r.Verdict, r.Failure, tc.verdict, strings.Join(r.Trace[max(0, len(r.Trace)-20):], "\n"))
			}
			if (r.Verdict == engine.VerdictFail) != (r.Failure != nil) {
				t.Errorf("verdict %s with failure %v", r.Verdict, r.Failure)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
			t.Logf("%s in %s", r.Verdict, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestSweepIsolatedKillsHungWorker: a worker process that never answers for one seed is
// killed after the watchdog and the grace, that seed counts as watchdog, and the sweep
// goes on with a fresh worker for the others.
func TestSweepIsolatedKillsHungWorker(t *testing.T) {
	t.Parallel()
	cfg, err := engine.ParseConfig([]byte(`{"workload": {"pkg": "./client"}, "watchdog": "1s"}`))
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in worker: it answers every seed but 3, on which it hangs. (Requests are
	// JSON lines such as {"seed":3}; the seed is the only number in them.)
	script := `while read l; do s=$(printf %s "$l" | tr -cd 0-9); if [ "$s" = 3 ]; then exec sleep 60; fi; echo "{\"seed\":$s,\"verdict\":\"pass\",\"faults\":[],\"trace_hash\":\"h$s\"}"; done`
	var starts int
	var mu sync.Mutex
	start := time.Now()
	res, err := engine.SweepIsolated(context.Background(), cfg, []uint64{1, 2, 3, 4, 5}, engine.IsolatedOptions{
		Workers: 1,
		Grace:   time.Second,
		Command: func() *exec.Cmd {
			mu.Lock()
			starts++
			mu.Unlock()
			return exec.Command("sh", "-c", script)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("sweep took %s: the hung worker was not killed after watchdog+grace", el)
	}
	var got []string
	for _, r := range res {
		got = append(got, fmt.Sprintf("%d:%s", r.Seed, r.Verdict))
	}
	want := []string{"1:pass", "2:pass", "3:watchdog", "4:pass", "5:pass"}
	if !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
		for _, r := range res {
			t.Logf("seed %d: %s %v", r.Seed, r.Verdict, r.Failure)
		}
	}
	if starts != 2 {
		t.Errorf("%d workers started, want 2 (the hung one replaced once)", starts)
	}
	if r := res[2]; r.Failure == nil || !strings.Contains(r.Failure.Reason, "seed 3") || r.Failure.Signature == "" {
		t.Errorf("watchdog result %+v lacks a reason naming the seed or a signature", r.Failure)
	}
}

// TestWatchdogInProcess: a guest that spins without host calls is stopped by the
// wall-clock watchdog, and the run reports it. The spinning goroutine cannot be
// reclaimed, and the Go runtime cannot preempt it either, so the next garbage
// collection of the process would wait for it forever: the test runs itself in a child
// process with the collector off, which exits afterwards. (This is why the CLI sweeps in
// worker processes.)
func TestWatchdogInProcess(t *testing.T) {
	if os.Getenv("SEEDFALL_TEST_SPIN") != "1" {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWatchdogInProcess$", "-test.v", "-test.timeout=90s")
		cmd.Env = append(os.Environ(), "SEEDFALL_TEST_SPIN=1", "GOGC=off")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestWatchdogInProcess") {
			t.Fatalf("child test: %v\n%s", err, out)
		}
		return
	}
	s := prepared(t, "spin-inproc.json", basicConfig(`"watchdog": "1s"`, basicNode("client", "spin", "1")))
	start := time.Now()
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	if r.Verdict != engine.VerdictWatchdog {
		t.Fatalf("verdict %s (%v), want watchdog", r.Verdict, r.Failure)
	}
	t.Logf("the watchdog of 1s fired after %s", time.Since(start)) // logged: a loaded machine stretches it
	if r.Failure == nil || !strings.Contains(r.Failure.Reason, "client#1") {
		t.Errorf("failure %v does not name the spinning node", r.Failure)
	}
	if l, _ := traceLine(r, "client#1 | spinning"); l == "" {
		t.Errorf("the guest did not get to its loop:\n%s", traceText(r))
	}
	// A seed on which the guest does not spin passes on the same Sim.
	if r := s.Run(context.Background(), 2, engine.RunOptions{}); r.Verdict != engine.VerdictPass {
		t.Errorf("seed 2: verdict %s (%v), want pass", r.Verdict, r.Failure)
	}
}

// TestWatchdogSparesSlowProgress: the watchdog stops a guest that runs without host
// calls, not a run that is merely slow: a guest that makes host calls for longer than the
// budget without ever blocking (here 400,000 clock reads against a 100ms budget) is never
// taken for a spin, whatever the machine's speed. It passes, or on a very slow machine
// meets the cap of 10 budgets for the whole run, which says so.
func TestWatchdogSparesSlowProgress(t *testing.T) {
	s := prepared(t, "busy.json", basicConfig(`"watchdog": "100ms"`, basicNode("client", "busy", "400000")))
	r := s.Run(context.Background(), 1, engine.RunOptions{Trace: true})
	switch {
	case r.Verdict == engine.VerdictPass:
	case r.Verdict == engine.VerdictWatchdog && strings.Contains(r.Failure.Reason, "while still making progress"):
		t.Logf("the machine is slow: %s", r.Failure.Reason)
	default:
		t.Fatalf("verdict %s (%v), want pass: %d host calls in %s of wall time", r.Verdict, r.Failure, r.Stats.HostCalls, time.Duration(r.Stats.WallNS))
	}
}
