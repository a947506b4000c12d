// Tests of fail-stop nodes (on_exit "restart") and of disk faults aimed by path and op
// kind, with the disk guest of testdata/faults (-mode failstop, -mode spray).
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

// ftFailStopConfig is the failstop disk guest with node fields (`"on_exit":"restart"`),
// a workload that waits wait, and extra top-level fields.
func ftFailStopConfig(nodeExtra, wait, extra string, args ...string) string {
	node := ftNode("disk", "./disk", append([]string{"-mode", "failstop", "-delay", "0s"}, args...)...)
	if nodeExtra != "" {
		node = strings.TrimSuffix(node, "}") + "," + nodeExtra + "}"
	}
	return ftConfig(ftNode("client", "./wait", "-for", wait), extra, node)
}

// A fail-stop node that exits 1 (or panics) is restarted after the restart delay over
// its disk as it was (an exit keeps the page cache: the unsynced /count survives), and
// the run passes; without on_exit the same exit fails the run.
func TestFailStopRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		why  string // what the trace's exit line says after "exited with code N"
		code int
	}{
		{"exit 1", []string{"-exits", "2"}, "", 1},
		{"panic", []string{"-exits", "2", "-panic"}, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ftSim(t, ftFailStopConfig(`"on_exit":"restart"`, "2s", "", tc.args...))
			r := ftRun(t, s, 1, ftPlan())
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			// Each life restarts restart_delay (250ms) after its exit, at the traced time.
			for life := 1; life <= 2; life++ {
				label, next := fmt.Sprintf("disk#%d", life), fmt.Sprintf("disk#%d", life+1)
				l := ftMust(t, r, label, fmt.Sprintf(`^exited with code %d \(fail-stop\): restart at \S+$`, tc.code))
				at, err := time.ParseDuration(l.text[strings.LastIndex(l.text, " ")+1:])
				if err != nil || at != l.at+250*time.Millisecond {
					t.Fatalf("%s exited at %s: %q, want a restart 250ms later", label, l.at, l.text)
				}
				if st := ftMust(t, r, next, `^start$`); st.at != at {
					t.Fatalf("%s started at %s, want %s", next, st.at, at)
				}
			}
			ftMust(t, r, "disk#3", `^\| life 3$`)
			ftMust(t, r, "disk#3", `^\| ready$`)
			if r.Stats.FailStopRestarts != 2 {
				t.Fatalf("stats.fail_stop_restarts = %d, want 2", r.Stats.FailStopRestarts)
			}
		})
	}
	t.Run("control: on_exit fail", func(t *testing.T) {
		s := ftSim(t, ftFailStopConfig(`"on_exit":"fail"`, "2s", "", "-exits", "2"))
		r := ftRun(t, s, 1, ftPlan())
		if r.Verdict != engine.VerdictFail || r.Failure.Reason != "disk#1 crashed: exit_code(1): stopping: fsync failed in life 1" {
			t.Fatalf("%s, want the node's exit to fail the run", r)
		}
		if r.Stats.FailStopRestarts != 0 {
			t.Fatalf("stats.fail_stop_restarts = %d, want 0", r.Stats.FailStopRestarts)
		}
	})
}

// A fail-stop node that exits again and again fails the run once it exceeds its
// restart budget, or, with a budget it never exceeds, when the horizon comes while it is
// still exiting.
func TestFailStopLoop(t *testing.T) {
	t.Run("default budget", func(t *testing.T) {
		s := ftSim(t, ftFailStopConfig(`"on_exit":"restart"`, "10s", "", "-exits", "1000"))
		r := ftRun(t, s, 1, ftPlan())
		want := regexp.MustCompile(`^disk: fail-stop restart loop: exited 11 times in 2\.5001\d+s \(more than max_restarts 10 within restart_window 10s\); last exited with code 1: stopping: fsync failed in life 11$`)
		if r.Verdict != engine.VerdictFail || !want.MatchString(r.Failure.Reason) {
			t.Fatalf("%s\nwant reason %q", r, want)
		}
		if r.Stats.FailStopRestarts != 10 {
			t.Fatalf("stats.fail_stop_restarts = %d, want 10", r.Stats.FailStopRestarts)
		}
	})
	t.Run("own budget, panics", func(t *testing.T) {
		s := ftSim(t, ftFailStopConfig(`"on_exit":"restart","max_restarts":3,"restart_window":"1s"`, "10s", "", "-exits", "1000", "-panic"))
		r := ftRun(t, s, 1, ftPlan())
		want := regexp.MustCompile(`^disk: fail-stop restart loop: exited 4 times in 75\d\.\d+ms \(more than max_restarts 3 within restart_window 1s\); last exited with code 2: panic: fsync failed in life 4 \(in main.failStop at faults/disk/main.go:\d+\)$`)
		if r.Verdict != engine.VerdictFail || !want.MatchString(r.Failure.Reason) {
			t.Fatalf("%s\nwant reason %q", r, want)
		}
	})
	t.Run("a window the loop outpaces passes", func(t *testing.T) {
		// Three exits, 250ms apart, never four within 500ms: within budget.
		s := ftSim(t, ftFailStopConfig(`"on_exit":"restart","max_restarts":1,"restart_window":"200ms"`, "2s", "", "-exits", "3"))
		if r := ftRun(t, s, 1, ftPlan()); r.Verdict != engine.VerdictPass {
			t.Fatalf("%s\n%s", r, ftDump(r))
		}
	})
	t.Run("still exiting at the horizon", func(t *testing.T) {
		s := ftSim(t, strings.Replace(ftFailStopConfig(`"on_exit":"restart","max_restarts":1000`, "10s", "", "-exits", "1000"), `"horizon":"30s"`, `"horizon":"3s"`, 1))
		r := ftRun(t, s, 1, ftPlan())
		want := "disk: fail-stop restart loop: still exiting at the horizon: exited 12 times in the last 10s (12 in the whole run); last exited with code 1: stopping: fsync failed in life 12"
		if r.Verdict != engine.VerdictFail || r.Failure.Reason != want {
			t.Fatalf("%s\nwant reason %q", r, want)
		}
	})
}

// Bad values of the new fields name the field.
func TestFailStopAndAimConfigErrors(t *testing.T) {
	base := func(node, faults string) string {
		return fmt.Sprintf(`{"nodes":[{"name":"server","pkg":"./s"%s}],"workload":{"pkg":"./c"},"faults":{%s}}`, node, faults)
	}
	for _, tc := range []struct{ text, want string }{
		{base(`,"on_exit":"crash"`, ""), `field nodes[0].on_exit: "crash" is not an exit policy (want "fail" or "restart")`},
		{base(`,"max_restarts":-1,"on_exit":"restart"`, ""), `field nodes[0].max_restarts: -1 is negative`},
		{base(`,"restart_window":"-1s","on_exit":"restart"`, ""), `field nodes[0].restart_window: -1s is negative`},
		{base(`,"max_restarts":3`, ""), `field nodes[0].max_restarts: a restart budget needs "on_exit": "restart"`},
		{base(`,"restart_window":"soon","on_exit":"restart"`, ""), `field nodes.restart_window: want a duration such as "250ms", got "soon"`},
		{`{"nodes":[{"name":"server","pkg":"./s"}],"workload":{"pkg":"./c","on_exit":"restart"}}`, `field workload.on_exit: the workload's exit ends the run`},
		{base("", `"fsync_eio":{"p":0.05,"ops":["fsnyc"]}`), `field faults.fsync_eio.ops[0]: "fsnyc" is not an op kind (want fsync, fdatasync or dir_fsync)`},
		{base("", `"fsync_eio":{"p":0.05,"ops":["write"]}`), `field faults.fsync_eio.ops[0]: "write" is not an op kind (want fsync, fdatasync or dir_fsync)`},
		{base("", `"fsync_eio":{"p":0.05,"paths":["data/*"]}`), `field faults.fsync_eio.paths[0]: "data/*" is not an absolute path glob`},
		{base("", `"fsync_eio":{"p":0.05,"paths":["/data/["]}`), `field faults.fsync_eio.paths[0]: "/data/[" is not a valid glob`},
		{base("", `"fsync_eio":{"p":1.5}`), `field faults.fsync_eio: 1.5 is not a probability (0 to 1)`},
		{base("", `"fsync_eio":2`), `field faults.fsync_eio: 2 is not a probability (0 to 1)`},
		{base("", `"fsync_eio":{"paths":["/wal"]}`), `field faults.fsync_eio.p: a probability above 0 is required when paths or ops are given`},
		{base("", `"fsync_eio":{"p":0.1,"opz":["fsync"]}`), `field faults.fsync_eio: want a probability such as 0.05 or an object`},
		{base("", `"fsync_eio":"often"`), `field faults.fsync_eio: want a probability such as 0.05 or an object`},
		{base("", `"crash_mid_op":{"p":0.5,"ops":["write","renam"]}`), `field faults.crash_mid_op.ops[1]: "renam" is not an op kind (want write, truncate, allocate, create, mkdir, link, rmdir, unlink, rename, fsync, fdatasync or dir_fsync)`},
		{base("", `"crash_mid_op":-0.1`), `field faults.crash_mid_op: -0.1 is not a probability (0 to 1)`},
	} {
		_, err := engine.ParseConfig([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
}

// The number form and the object form both read, and write back as they were read.
func TestDiskFaultJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{`0.05`, `0.05`},
		{`{"p":0.05}`, `0.05`},
		{`{"p":0.05,"paths":["/data/wal/*"],"ops":["fsync"]}`, `{"p":0.05,"paths":["/data/wal/*"],"ops":["fsync"]}`},
		{`{"ops":["write"],"p":1}`, `{"p":1,"ops":["write"]}`},
	} {
		var d engine.DiskFault
		if err := json.Unmarshal([]byte(tc.in), &d); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		b, err := json.Marshal(d)
		if err != nil || string(b) != tc.out {
			t.Fatalf("%s: marshal = %s, %v; want %s", tc.in, b, err, tc.out)
		}
		var again engine.DiskFault
		if err := json.Unmarshal(b, &again); err != nil || fmt.Sprint(again) != fmt.Sprint(d) {
			t.Fatalf("%s: round trip %+v, want %+v (%v)", tc.in, again, d, err)
		}
	}
	// A whole config: fsync_eio absent stays absent, crash_mid_op keeps its form.
	cfg, err := engine.ParseConfig([]byte(`{"nodes":[{"name":"server","pkg":"./s","on_exit":"restart"}],"workload":{"pkg":"./c"},"faults":{"crash_mid_op":{"p":0.5,"ops":["rename"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(cfg.Faults)
	if s := string(b); strings.Contains(s, "fsync_eio") || !strings.Contains(s, `"crash_mid_op":{"p":0.5,"ops":["rename"]}`) {
		t.Fatalf("faults marshal to %s", s)
	}
	if n := cfg.Nodes[0]; n.MaxRestarts != 10 || time.Duration(n.RestartWindow) != 10*time.Second {
		t.Fatalf("restart budget defaults: %d in %s, want 10 in 10s", n.MaxRestarts, time.Duration(n.RestartWindow))
	}
}

var eioLine = regexp.MustCompile(`^disk #\d+ (\S+) (\S+): EIO \(injected\)$`)

// sprayEIO runs seeds of the spray guest with fsync_eio (a JSON value) and returns the
// (kind, path) of every injected EIO, and how many.
func sprayEIO(t *testing.T, eio string, seeds int) map[string]int {
	t.Helper()
	s := ftSim(t, ftDiskConfig(`"faults":{"fsync_eio":`+eio+`}`, "-mode", "spray", "-n", "20", "-delay", "0s"))
	hits := map[string]int{}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		r := ftRun(t, s, seed, nil)
		if r.Verdict != engine.VerdictPass {
			t.Fatalf("seed %d: %s\n%s", seed, r, ftDump(r))
		}
		for _, l := range ftParse(t, r) {
			if m := eioLine.FindStringSubmatch(l.raw); m != nil && strings.HasPrefix(l.who, "disk#") {
				hits[m[1]+" "+m[2]]++
			}
		}
	}
	return hits
}

// An fsync_eio aimed at /data/wal/* file fsyncs fails only those, over many seeds; the
// same probability unaimed hits the other paths and the directories too.
func TestFsyncEIOAimed(t *testing.T) {
	hits := sprayEIO(t, `{"p":0.2,"paths":["/data/wal/*"],"ops":["fsync"]}`, 25)
	if len(hits) != 1 || hits["fsync /data/wal/seg"] < 25 {
		t.Fatalf("aimed EIO hit %v, want only fsync /data/wal/seg (at least once a seed)", hits)
	}
	t.Logf("aimed: %v", hits)
	// Directory fsyncs only, anywhere below /data.
	hits = sprayEIO(t, `{"p":0.2,"paths":["/data/**"],"ops":["dir_fsync"]}`, 10)
	if len(hits) != 1 || hits["fsync /data/wal"] == 0 || hits["fsync /data"] != 0 {
		// "/data/**" is below /data: /data/wal, not /data itself.
		t.Fatalf("dir_fsync EIO hit %v, want only fsync /data/wal", hits)
	}
	t.Logf("dir_fsync below /data: %v", hits)
}

// Control for the property above: unaimed, the same probability hits every sync.
func TestFsyncEIOUnaimedHitsAll(t *testing.T) {
	hits := sprayEIO(t, `0.2`, 10)
	for _, want := range []string{"fsync /data/wal/seg", "fsync /data/meta/m", "fsync /data/wal", "fsync /data"} {
		if hits[want] == 0 {
			t.Fatalf("unaimed EIO hit %v, never %s", hits, want)
		}
	}
}

var crashLine = regexp.MustCompile(`^crash (disk#\d+) during disk op #\d+ (\S+) (\S+)`)

// A mid-op crash aimed at renames in /data/meta fires only in those.
func TestCrashMidOpAimed(t *testing.T) {
	s := ftSim(t, ftDiskConfig(`"faults":{"crash_per_sec":3,"restart_delay":"20ms","crash_mid_op":{"p":1,"paths":["/data/meta/*"],"ops":["rename"]}}`,
		"-mode", "spray", "-n", "400", "-delay", "0s"))
	n := 0
	for seed := uint64(1); seed <= 8; seed++ {
		r := ftRun(t, s, seed, nil)
		for _, l := range ftParse(t, r) {
			if l.who != "fault" || !strings.HasPrefix(l.raw, "crash ") {
				continue
			}
			m := crashLine.FindStringSubmatch(l.raw)
			if m == nil || m[2] != "rename" || m[3] != "/data/meta/tmp" {
				t.Fatalf("seed %d: crash %q, want only mid-op crashes in rename /data/meta/tmp", seed, l.raw)
			}
			n++
		}
	}
	if n < 8 {
		t.Fatalf("%d aimed crashes in 8 seeds, want at least 8", n)
	}
	t.Logf("%d crashes, all in rename /data/meta/tmp", n)
}
