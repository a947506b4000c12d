// Tests of the WASI host, one per function group, through the basic guest
// (testdata/guests/basic): each mode prints its results, and the tests compare the
// lines in the trace.
package engine_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// guestRun runs the basic guest as the workload in the given mode and returns its
// output lines; the run must pass.
func guestRun(t *testing.T, seed uint64, extra string, args ...string) ([]string, *engine.Result) {
	t.Helper()
	name := "wasi-" + strings.Join(args, "-") + extra
	s := prepared(t, name, basicConfig(extra, basicNode("client", args...)))
	r := runSeed(t, s, seed, nil)
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%v: verdict %s (%v)\n%s", args, r.Verdict, r.Failure, traceText(r))
	}
	return output(r, "client#1"), r
}

func wantLines(t *testing.T, got, want []string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing line %q in output:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// TestWASIArgsEnviron: args_get/args_sizes_get and environ_get/environ_sizes_get give
// the node's name and args, and an environment sorted by key with the config's
// variables and seedfall's own.
func TestWASIArgsEnviron(t *testing.T) {
	t.Parallel()
	cfg := `{"workload": {"name": "client", "pkg": "./guests/basic", "args": ["args", "two words", "é"], "env": {"ZED": "last", "APP_MODE": "a=b"}}}`
	s := prepared(t, "wasi-args.json", cfg)
	r := runSeed(t, s, 7, nil)
	got := output(r, "client#1")
	wantLines(t, got, []string{
		`args ["client" "args" "two words" "é"]`,
		"environ sorted: true",
		"env APP_MODE=a=b",
		"env ZED=last",
		"env SEEDFALL=1",
		"env SEEDFALL_NODE=client",
		"env SEEDFALL_INCARNATION=1",
		"env SEEDFALL_SEED=7",
		"node client incarnation 1 in simulation true",
		`getwd "/" <nil>`,
	})
}

// TestWASIClocks: clock_time_get never goes back, advances on every read, and a 10s
// sleep jumps virtual time at almost no wall-clock cost; the realtime clock starts at
// the fixed epoch and a clock_jump fault moves it but not the monotonic clock.
func TestWASIClocks(t *testing.T) {
	t.Parallel()
	s := prepared(t, "wasi-clock", basicConfig("", basicNode("client", "clock")))
	start := time.Now()
	r := runSeed(t, s, 1, nil)
	wall := time.Since(start)
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("verdict %s (%v)\n%s", r.Verdict, r.Failure, traceText(r))
	}
	got := output(r, "client#1")
	wantLines(t, got, []string{
		"year 2025",
		"monotonic went back 0 times",
		"clock advanced during the loop: true",
		"slept 10s: elapsed >= 10s true, < 10.1s true",
		"wall clock moved 10s",
	})
	if r.EndNS < int64(10*time.Second) {
		t.Errorf("run ended at virtual %s, want after the 10s sleep", time.Duration(r.EndNS).String())
	}
	if wall > 5*time.Second {
		t.Errorf("10s of virtual sleep took %s of wall time", wall)
	}

	t.Run("clock_jump", func(t *testing.T) {
		s := prepared(t, "wasi-clock", basicConfig("", basicNode("client", "clock")))
		jump := &engine.FaultPlan{Faults: []engine.Fault{{AtNS: int64(5 * time.Second), Kind: engine.FaultClockJump, Node: "client", JumpNS: -int64(time.Hour)}}}
		r := runSeed(t, s, 1, jump)
		got := output(r, "client#1")
		wantLines(t, got, []string{
			"slept 10s: elapsed >= 10s true, < 10.1s true", // monotonic: unaffected
			"wall clock moved -59m50s",                     // realtime: jumped back an hour
		})
		if l, _ := traceLine(r, "fault wall clock of client jumps by -1h0m0s"); l == "" {
			t.Errorf("no clock jump in the trace")
		}
	})
}

// TestWASIRandom: random_get is a pure function of the seed (and node incarnation), so
// crypto/rand, math/rand, map order and select all repeat per seed and differ across
// seeds.
func TestWASIRandom(t *testing.T) {
	t.Parallel()
	a1, _ := guestRun(t, 1, "", "random")
	a2, _ := guestRun(t, 1, "", "random")
	b, _ := guestRun(t, 2, "", "random")
	if len(a1) != 4 {
		t.Fatalf("output %q", a1)
	}
	if !slices.Equal(a1, a2) {
		t.Errorf("seed 1 twice:\n%s\n---\n%s", strings.Join(a1, "\n"), strings.Join(a2, "\n"))
	}
	for i := range a1 {
		if a1[i] == b[i] {
			t.Errorf("seeds 1 and 2 agree on %q", a1[i])
		}
	}
}

// TestWASIFiles runs the same sequence of file operations natively over a real
// directory and in the simulator over the simulated disk: open/create/excl/trunc/append,
// pread/pwrite, seek, stat, readdir, rename, unlink, mkdir/rmdir, truncate. The outputs
// must agree line by line.
func TestWASIFiles(t *testing.T) {
	t.Parallel()
	sim, _ := guestRun(t, 1, "", "files", "/w")

	bin := filepath.Join(t.TempDir(), "basic")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/guests/basic").CombinedOutput(); err != nil {
		t.Fatalf("native build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "files", filepath.Join(t.TempDir(), "w")).Output()
	if err != nil {
		t.Fatalf("native run: %v\n%s", err, out)
	}
	native := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")

	var simOnly, common []string
	for _, l := range sim {
		if strings.HasPrefix(l, "sim: ") {
			simOnly = append(simOnly, l)
		} else {
			common = append(common, l)
		}
	}
	for i := 0; i < max(len(common), len(native)); i++ {
		var s, n string
		if i < len(common) {
			s = common[i]
		}
		if i < len(native) {
			n = native[i]
		}
		if s != n {
			t.Errorf("line %d:\n  simulated %q\n  native    %q", i+1, s, n)
		}
	}
	if len(native) < 80 {
		t.Errorf("native run printed only %d lines", len(native))
	}
	// Directory listings come back sorted by name, whatever the guest asks for.
	wantLines(t, simOnly, []string{"sim: readdirnames in host order a b c e m sub zz, sorted true"})
}

// TestWASIMapped runs flock and mmap natively over a real directory and in the simulator
// (the wasip1 platform layer, engine/internal/platform): reads through a map of what was
// written through the file, a map longer than its file, writes and truncates that show
// in a map, stores through a writable shared map that reads and msync see, a private
// map, mmap's errors, and flock per open file description: EWOULDBLOCK, release at
// close, shared locks, Linux's conversion that drops the old lock when it fails, a
// blocking lock that waits for another goroutine. The outputs must agree line by line.
func TestWASIMapped(t *testing.T) {
	t.Parallel()
	sim, _ := guestRun(t, 1, "", "mapped", "/w")

	bin := filepath.Join(t.TempDir(), "basic")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/guests/basic").CombinedOutput(); err != nil {
		t.Fatalf("native build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "mapped", filepath.Join(t.TempDir(), "w")).Output()
	if err != nil {
		t.Fatalf("native run: %v\n%s", err, out)
	}
	native := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i := 0; i < max(len(sim), len(native)); i++ {
		var s, n string
		if i < len(sim) {
			s = sim[i]
		}
		if i < len(native) {
			n = native[i]
		}
		if s != n {
			t.Errorf("line %d:\n  simulated %q\n  native    %q", i+1, s, n)
		}
	}
	if len(native) < 40 {
		t.Errorf("native run printed only %d lines", len(native))
	}
}

// TestWASIPollTimers: poll_oneoff with clock subscriptions wakes sleepers in deadline
// order, and stopped, reset, AfterFunc, context and ticker timers behave.
func TestWASIPollTimers(t *testing.T) {
	t.Parallel()
	got, _ := guestRun(t, 3, "", "timers")
	want := []string{
		"sleepers woke in order bca",
		"stop before firing: true",
		"first: afterfunc",
		"second: reset timer",
		"stopped timer stayed silent",
		"context: context deadline exceeded after >= 75ms true",
		"5 ticks of 10ms took >= 50ms true, < 60ms true",
		"total virtual time < 1s true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("output:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWASIProcExit: proc_exit's code is the node's exit code; 0 passes the run, any
// other code of the workload fails it with the code in the trace.
func TestWASIProcExit(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"0", "1", "3", "125"} {
		s := prepared(t, "wasi-exit-"+code, basicConfig("", basicNode("client", "exit", code)))
		r := runSeed(t, s, 1, nil)
		wantVerdict := engine.VerdictFail
		if code == "0" {
			wantVerdict = engine.VerdictPass
		}
		if r.Verdict != wantVerdict {
			t.Errorf("exit %s: verdict %s, want %s", code, r.Verdict, wantVerdict)
		}
		if l, _ := traceLine(r, "client#1 exited with code "+code); l == "" {
			t.Errorf("exit %s: no exit line in the trace:\n%s", code, traceText(r))
		}
		if code != "0" && (r.Failure == nil || r.Failure.Reason != "client#1: exiting with "+code) {
			t.Errorf("exit %s: failure %+v, want the workload's last line as the reason", code, r.Failure)
		}
	}
}

// TestWASISchedYield: sched_yield returns success and moves the clock on, and
// goroutines that yield to each other both finish.
func TestWASISchedYield(t *testing.T) {
	t.Parallel()
	got, _ := guestRun(t, 1, "", "yield")
	want := []string{
		"sched_yield errors []",
		"1000 yields moved the clock >= 1ms true",
		"gosched ping-pong 100 100",
	}
	if !slices.Equal(got, want) {
		t.Errorf("output:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWASIPollSockets: poll_oneoff with fd subscriptions, alone and with a clock
// subscription (a read deadline), over the simulated network on one node; sock_accept,
// sock_shutdown, and refused and unreachable dials.
func TestWASIPollSockets(t *testing.T) {
	t.Parallel()
	got, _ := guestRun(t, 1, "", "sockets")
	want := []string{
		`echo "hello" ok`,
		"read with nothing to read: timeout true after >= 100ms true",
		`blocked read woke with "late" ok`,
		"after close-write the echo ends: 0 EOF",
		"dial after the listener closed: refused true",
		"dial an unknown node: unreachable true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("output:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWASIMeta runs the basic guest's metadata checks natively over a real directory
// and in the simulator, and the outputs must agree line by line: hard links (path_link)
// and nlink (2 for a second name, 0 for an unlinked open file, 2 + subdirectories for
// a directory), file times that follow the clock (a write after a sleep moves mtime and
// ctime forward; relatime atime; utimensat), ENOTDIR for "file/", EISDIR for opening a
// directory for writing.
func TestWASIMeta(t *testing.T) {
	t.Parallel()
	sim, _ := guestRun(t, 1, "", "meta", "/w")

	bin := filepath.Join(t.TempDir(), "basic")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/guests/basic").CombinedOutput(); err != nil {
		t.Fatalf("native build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "meta", filepath.Join(t.TempDir(), "w")).Output()
	if err != nil {
		t.Fatalf("native run: %v\n%s", err, out)
	}
	native := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i := 0; i < max(len(sim), len(native)); i++ {
		var s, n string
		if i < len(sim) {
			s = sim[i]
		}
		if i < len(native) {
			n = native[i]
		}
		if s != n {
			t.Errorf("line %d:\n  simulated %q\n  native    %q", i+1, s, n)
		}
	}
	if len(native) < 40 {
		t.Errorf("native run printed only %d lines", len(native))
	}
}
