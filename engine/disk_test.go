package engine_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

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
