package engine_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

var readbackLine = regexp.MustCompile(`readback life=(\d+) before: ok=(\d+) eio=(\d+) wrong=(\d+) / after: ok=(\d+) eio=(\d+) wrong=(\d+) werr=(\d+)`)

// readbackCounts are the outcomes the readback guest counted in one life.
type readbackCounts struct{ life, bOK, bEIO, bWrong, ok, eio, wrong, werr int }

// readbackSims are the prepared readback worlds, by faults.
var readbackSims = map[string]*engine.Sim{}

// runReadback runs the readback guest (40 records) with the given faults (JSON members
// of "faults") and plan, and returns its lines, the faults applied and the result.
func runReadback(t *testing.T, faults string, seed uint64, plan *engine.FaultPlan) ([]readbackCounts, *engine.Result) {
	t.Helper()
	s := readbackSims[faults]
	if s == nil {
		s = ftSim(t, ftDiskConfig(`"faults":{`+faults+`}`, "-mode", "readback", "-n", "40", "-delay", "0s"))
		readbackSims[faults] = s
	}
	r := ftRun(t, s, seed, plan)
	var out []readbackCounts
	for _, l := range r.Trace {
		m := readbackLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var c readbackCounts
		for i, p := range []*int{&c.life, &c.bOK, &c.bEIO, &c.bWrong, &c.ok, &c.eio, &c.wrong, &c.werr} {
			fmt.Sscan(m[i+1], p)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatalf("faults %s seed %d: no readback line\n%s", faults, seed, ftDump(r))
	}
	return out, r
}

func countKind(r *engine.Result, k engine.FaultKind) int {
	n := 0
	for _, f := range r.Faults {
		if f.Kind == k {
			n++
		}
	}
	return n
}

// devCrash makes power losses after 1s, restarting 50ms later: the guest has written
// and read back everything by then, so its second life reads what survived. (A plan
// would replay exactly and draw no device faults at their rates.)
const devCrash = `"crash_per_sec":3,"start_after":"1s","restart_delay":"50ms","crash_mid_op":0,`

// TestDeviceFaultsGuest: a guest writes records, fsyncs and reads each back, under each
// device fault in turn, and counts what it sees, as Linux would show it: EIO for a
// latent sector error (in that life and the next, as the device keeps it), wrong bytes
// for a transient or durable corruption, a misdirected or a lost write, a write error
// for write_eio. The negative control, without faults, reads back everything intact.
func TestDeviceFaultsGuest(t *testing.T) {
	for _, tc := range []struct {
		name, faults string
		crash        bool
		check        func(c []readbackCounts) bool
	}{
		{"control", `"slow_io_latency":"1s"`, true, func(c []readbackCounts) bool {
			return c[0].ok == 40 && c[1].bOK == 40 && c[1].ok == 40
		}},
		{"read_eio", `"read_eio":0.1`, true, func(c []readbackCounts) bool {
			// The first life sees EIO and never wrong bytes; the second still sees the
			// bad sectors before it rewrites them.
			return c[0].eio > 0 && c[0].wrong == 0 && c[0].eio+c[0].ok == 40 && c[1].bEIO > 0
		}},
		{"corrupt_read", `"corrupt_read":0.2`, true, func(c []readbackCounts) bool {
			// Wrong bytes, never an error; every record is there after the crash.
			return c[0].wrong > 0 && c[0].eio == 0 && c[1].bEIO == 0 && c[1].bOK+c[1].bWrong == 40
		}},
		{"corrupt", `"corrupt":0.2`, true, func(c []readbackCounts) bool {
			// Nothing wrong until the crash, then the device returns corrupted sectors.
			return c[0].ok == 40 && c[1].bWrong > 0 && c[1].bEIO == 0
		}},
		{"misdirected_write", `"misdirected_write":0.2`, false, func(c []readbackCounts) bool {
			return c[0].wrong > 0 && c[0].werr == 0
		}},
		{"lost_write", `"lost_write":0.2`, true, func(c []readbackCounts) bool {
			// fsync succeeded and the read back (from the page cache) was right, yet
			// after the crash some records are gone.
			return c[0].ok == 40 && c[1].bWrong > 0
		}},
		{"write_eio", `"write_eio":0.2`, false, func(c []readbackCounts) bool {
			return c[0].werr > 0 && c[0].wrong == 0 && c[0].werr+c[0].ok == 40
		}},
		{"slow_io", `"slow_io":0.2,"slow_io_latency":"50ms"`, false, func(c []readbackCounts) bool {
			return c[0].ok == 40
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			faults := tc.faults
			if tc.crash {
				faults = devCrash + faults
			}
			hits := 0
			for seed := uint64(1); seed <= 2; seed++ {
				c, r := runReadback(t, faults, seed, nil)
				if tc.crash && len(c) < 2 {
					t.Fatalf("seed %d: want two lives, got %+v\n%s", seed, c, ftDump(r))
				}
				if !tc.check(c) {
					t.Fatalf("seed %d: counts %+v\n%s", seed, c, ftDump(r))
				}
				if tc.name == "slow_io" {
					// The guest was blocked in its writes and fsyncs for the spikes: its
					// line comes after all of them.
					var stalled int64
					for _, f := range r.Faults {
						stalled += f.LatencyNS
					}
					var done time.Duration
					for _, l := range ftParse(t, r) {
						if l.out && strings.HasPrefix(l.text, "readback life=1") {
							done = l.at
						}
					}
					if stalled == 0 || int64(done) < stalled {
						t.Fatalf("seed %d: readback done at %s, stalls %s", seed, done, time.Duration(stalled))
					}
				}
				if tc.name != "control" {
					for _, l := range r.Trace {
						if seed == 1 && strings.Contains(l, " fault "+tc.name+" ") {
							t.Log(l) // the trace line, as docs/faults.md shows it
							break
						}
					}
					hits += countKind(r, engine.FaultKind(tc.name))
				} else if len(r.Faults) != countKind(r, engine.FaultCrash) {
					t.Fatalf("control applied %v", r.Faults)
				}
			}
			if tc.name != "control" && hits == 0 {
				t.Fatalf("no %s fault applied", tc.name)
			}
			t.Logf("%s: %d faults in 2 seeds", tc.name, hits)
		})
	}
}

// TestDeviceFaultsReplay: the faults a run drew at its rates, saved as a plan (as replay
// -save writes it) and read back, replay exactly: the same trace hash, the same faults.
// A plan without them (the negative control) runs differently.
func TestDeviceFaultsReplay(t *testing.T) {
	all := `"read_eio":0.05,"corrupt":0.05,"corrupt_read":0.05,"misdirected_write":0.05,"lost_write":0.05,"write_eio":0.05,"slow_io":0.05`
	all = devCrash + all
	_, r := runReadback(t, all, 7, nil)
	kinds := map[engine.FaultKind]bool{}
	for _, f := range r.Faults {
		kinds[f.Kind] = true
	}
	if len(kinds) < 5 {
		t.Fatalf("only %v struck; want most kinds for the test to mean something", kinds)
	}
	b, err := json.Marshal(engine.FaultPlan{Seed: 7, Faults: r.Faults})
	if err != nil {
		t.Fatal(err)
	}
	var plan engine.FaultPlan
	if err := json.Unmarshal(b, &plan); err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Faults {
		if err := f.Validate(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	_, again := runReadback(t, all, 7, &plan)
	if again.TraceHash != r.TraceHash {
		t.Fatalf("replay differs: %s vs %s\n--- first\n%s\n--- replay\n%s", r.TraceHash, again.TraceHash, ftDump(r), ftDump(again))
	}
	if fmt.Sprint(again.Faults) != fmt.Sprint(r.Faults) {
		t.Fatalf("replay applied\n%v\nwant\n%v", again.Faults, r.Faults)
	}
	// The plan alone, with the knobs off, replays it too (the faults are pinned).
	_, off := runReadback(t, `"crash_per_sec":0,"restart_delay":"50ms"`, 7, &plan)
	if fmt.Sprint(off.Faults) != fmt.Sprint(r.Faults) {
		t.Fatalf("replay with the knobs off applied\n%v\nwant\n%v", off.Faults, r.Faults)
	}
	// Control: only the crashes.
	var crashes []engine.Fault
	for _, f := range r.Faults {
		if f.Kind == engine.FaultCrash {
			crashes = append(crashes, f)
		}
	}
	_, ctl := runReadback(t, `"restart_delay":"50ms"`, 7, ftPlan(crashes...))
	if ctl.TraceHash == r.TraceHash {
		t.Fatal("a run without the device faults has the same trace hash")
	}
	for _, l := range r.Trace {
		if strings.Contains(l, " fault ") && !strings.Contains(l, " fault crash") && !strings.Contains(l, "disk after crash") {
			t.Log(l)
		}
	}
	t.Logf("%d faults of kinds %v replayed", len(r.Faults), kinds)
}

// TestDeviceFaultConfigErrors: bad device fault knobs and plan faults name the field.
func TestDeviceFaultConfigErrors(t *testing.T) {
	base := func(faults string) string {
		return `{"nodes":[{"name":"server","pkg":"./s"}],"workload":{"pkg":"./c"},"faults":{` + faults + `}}`
	}
	for _, tc := range []struct{ text, want string }{
		{base(`"read_eio":{"p":0.1,"ops":["write"]}`), `field faults.read_eio.ops[0]: "write" is not an op kind (want read)`},
		{base(`"corrupt_read":1.5`), `field faults.corrupt_read: 1.5 is not a probability (0 to 1)`},
		{base(`"corrupt":{"p":0.1,"ops":["fsync"]}`), `field faults.corrupt.ops[0]: "fsync" is not an op kind (want write)`},
		{base(`"misdirected_write":{"paths":["/wal"]}`), `field faults.misdirected_write.p: a probability above 0 is required`},
		{base(`"lost_write":{"p":0.1,"paths":["wal"]}`), `field faults.lost_write.paths[0]: "wal" is not an absolute path glob`},
		{base(`"write_eio":"sometimes"`), `field faults.write_eio: want a probability`},
		{base(`"slow_io":{"p":0.1,"ops":["read"]}`), `field faults.slow_io.ops[0]: "read" is not an op kind (want write, fsync, fdatasync or dir_fsync)`},
		{base(`"slow_io_latency":"-1s"`), `field faults.slow_io_latency: -1s is negative`},
	} {
		_, err := engine.ParseConfig([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
	// The control: every knob well formed.
	if _, err := engine.ParseConfig([]byte(base(`"read_eio":{"p":0.1,"paths":["/data/**"],"ops":["read"]},"corrupt":0.1,"corrupt_read":0.1,"misdirected_write":0.1,"lost_write":0.1,"write_eio":0.1,"slow_io":{"p":0.1,"ops":["fsync"]},"slow_io_latency":"1s"`))); err != nil {
		t.Fatalf("good knobs: %v", err)
	}
	for _, tc := range []struct {
		f    engine.Fault
		want string
	}{
		{engine.Fault{Kind: engine.FaultReadEIO, Node: "n", DiskOp: 3}, "not a disk op: use read_op"},
		{engine.Fault{Kind: engine.FaultWriteEIO, Node: "n", ReadOp: 3}, "read_op pins a read fault"},
		{engine.Fault{Kind: engine.FaultCorrupt, Node: "n", LatencyNS: 5}, "latency_ns is for a slow_io"},
		{engine.Fault{Kind: engine.FaultSlowIO, Node: "n", ReadOp: -1}, "must not be negative"},
	} {
		if err := tc.f.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %s", tc.f, err, tc.want)
		}
	}
	if err := (engine.Fault{Kind: engine.FaultSlowIO, Node: "n", DiskOp: 4, Incarnation: 1, LatencyNS: 5}).Validate(); err != nil {
		t.Fatalf("good slow_io: %v", err)
	}
}

// TestDeviceFaultsByTime: device faults in a plan by time strike the node's next
// matching call and are recorded pinned to it; the recorded plan replays with the same
// trace hash.
func TestDeviceFaultsByTime(t *testing.T) {
	plan := ftPlan(
		engine.Fault{AtNS: 5000, Kind: engine.FaultWriteEIO, Node: "disk"},
		engine.Fault{AtNS: 5000, Kind: engine.FaultReadEIO, Node: "disk"},
		engine.Fault{AtNS: 5000, Kind: engine.FaultSlowIO, Node: "disk", LatencyNS: int64(30 * time.Millisecond)},
	)
	c, r := runReadback(t, `"slow_io_latency":"1s"`, 1, plan)
	if len(r.Faults) != 3 || c[0].werr != 1 || c[0].eio != 1 || c[0].ok != 38 {
		t.Fatalf("applied %v, counts %+v\n%s", r.Faults, c, ftDump(r))
	}
	for _, f := range r.Faults {
		if f.DiskOp == 0 && f.ReadOp == 0 || f.Incarnation != 1 {
			t.Fatalf("%s: not pinned to its call", f)
		}
		if f.Kind == engine.FaultSlowIO && f.LatencyNS != int64(30*time.Millisecond) {
			t.Fatalf("%s: the plan's latency was not kept", f)
		}
	}
	_, again := runReadback(t, `"slow_io_latency":"1s"`, 1, ftPlan(r.Faults...))
	if again.TraceHash != r.TraceHash || fmt.Sprint(again.Faults) != fmt.Sprint(r.Faults) {
		t.Fatalf("the recorded plan replays differently:\n%v\n%v", r.Faults, again.Faults)
	}
}
