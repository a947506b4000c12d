// Acceptance tests of the fault catalogue: for every fault kind, a guest that observes
// it and a negative control that must pass. Plans are hand-written (engine.FaultPlan)
// wherever the fault can be placed exactly; where the outcome of a crash is a draw from
// the disk stream (which pending write survives, which prefix of a directory's pending
// operations), the test runs a few fixed seeds and asserts on the set of outcomes.
//
// The guests live in testdata/faults and are built once per test process:
//
//	disk   writes, syncs, renames and crashes (-mode), and reports what survived
//	net    a ping server and client, heartbeats, errors named by errno
//	clock  prints its wall and monotonic clocks
//	wait   the workload of the single-node tests: sleeps, then ends the run
package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
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

const ftDir = "testdata/faults"

var (
	ftOnce   sync.Once
	ftWasm   map[string]string // guest package ("./disk") -> built module
	ftErr    error
	ftPkgs   = []string{"./disk", "./net", "./clock", "./wait"}
	ftDirAbs string
)

// ftModules builds every fault guest once per process.
func ftModules(t *testing.T) map[string]string {
	t.Helper()
	ftOnce.Do(func() {
		ftDirAbs, ftErr = filepath.Abs(ftDir)
		if ftErr != nil {
			return
		}
		var nodes []string
		for i, p := range ftPkgs[:len(ftPkgs)-1] {
			nodes = append(nodes, fmt.Sprintf(`{"name":"n%d","pkg":%q}`, i, p))
		}
		text := fmt.Sprintf(`{"nodes":[%s],"workload":{"name":"client","pkg":"./wait"}}`, strings.Join(nodes, ","))
		cfg, err := engine.ParseConfig([]byte(text))
		if err != nil {
			ftErr = err
			return
		}
		cfg.Dir, cfg.Path = ftDirAbs, filepath.Join(ftDirAbs, "build.json")
		s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
		if err != nil {
			ftErr = err
			return
		}
		defer s.Close()
		ftWasm = map[string]string{}
		for i, p := range ftPkgs {
			ftWasm[p] = s.WasmPaths()[i]
		}
	})
	if ftErr != nil {
		t.Fatalf("build fault guests: %v", ftErr)
	}
	return ftWasm
}

// ftSim prepares a world from a config text whose packages are fault guests.
func ftSim(t *testing.T, text string) *engine.Sim {
	t.Helper()
	mods := ftModules(t)
	cfg, err := engine.ParseConfig([]byte(text))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, text)
	}
	cfg.Dir, cfg.Path = ftDirAbs, filepath.Join(ftDirAbs, "faults-test.json")
	var wasm []string
	for _, n := range cfg.AllNodes() {
		p, ok := mods[n.Pkg]
		if !ok {
			t.Fatalf("node %s: %s is not a fault guest", n.Name, n.Pkg)
		}
		wasm = append(wasm, p)
	}
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{Wasm: wasm})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ftNode renders one node of a config.
func ftNode(name, pkg string, args ...string) string {
	a, _ := json.Marshal(args)
	if len(args) == 0 {
		a = []byte("[]")
	}
	return fmt.Sprintf(`{"name":%q,"pkg":%q,"args":%s}`, name, pkg, a)
}

// ftConfig renders a config: nodes, a workload, and extra top-level fields ("" or
// `"strict_dirs":true`).
func ftConfig(workload string, extra string, nodes ...string) string {
	if extra != "" {
		extra = "," + extra
	}
	return fmt.Sprintf(`{"nodes":[%s],"workload":%s,"horizon":"30s"%s}`, strings.Join(nodes, ","), workload, extra)
}

// ftDiskConfig is one disk guest ("disk") and a workload that waits 2s.
func ftDiskConfig(extra string, args ...string) string {
	return ftConfig(ftNode("client", "./wait", "-for", "2s"), extra, ftNode("disk", "./disk", args...))
}

func ftPlan(fs ...engine.Fault) *engine.FaultPlan { return &engine.FaultPlan{Faults: fs} }

// ftCrash is an idle crash at a time, with a restart delay.
func ftCrash(node string, at, restart time.Duration) engine.Fault {
	return engine.Fault{AtNS: int64(at), Kind: engine.FaultCrash, Node: node, RestartNS: int64(restart)}
}

func ftRun(t *testing.T, s *engine.Sim, seed uint64, plan *engine.FaultPlan) *engine.Result {
	t.Helper()
	r := s.Run(context.Background(), seed, engine.RunOptions{Plan: plan, Trace: true})
	if r.Verdict == engine.VerdictError || r.Verdict == engine.VerdictWatchdog {
		t.Fatalf("seed %d: %s: %+v\n%s", seed, r.Verdict, r.Failure, strings.Join(r.Trace, "\n"))
	}
	return r
}

// ftLine is one parsed trace line.
type ftLine struct {
	at   time.Duration
	who  string // "disk#2", "fault", "net", "world"
	out  bool   // a line the guest printed ("who | text")
	text string // what follows who (for a printed line, what follows "| ")
	raw  string // what follows who
}

func ftParse(t *testing.T, r *engine.Result) []ftLine {
	t.Helper()
	var out []ftLine
	for _, l := range r.Trace {
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Fatalf("trace line %q", l)
		}
		at, err := time.ParseDuration(f[0])
		if err != nil {
			t.Fatalf("trace line %q: %v", l, err)
		}
		rest := strings.TrimLeft(l, " ")[len(f[0])+1:]
		who, text, _ := strings.Cut(rest, " ")
		x := ftLine{at: at, who: who, text: text, raw: text}
		if strings.HasPrefix(text, "| ") || text == "|" {
			x.out, x.text = true, strings.TrimPrefix(strings.TrimPrefix(text, "|"), " ")
		}
		out = append(out, x)
	}
	return out
}

// ftOutput returns the lines a node (every incarnation when label has no '#') printed.
func ftOutput(t *testing.T, r *engine.Result, label string) []ftLine {
	var out []ftLine
	for _, l := range ftParse(t, r) {
		if !l.out {
			continue
		}
		if l.who == label || !strings.Contains(label, "#") && strings.HasPrefix(l.who, label+"#") {
			out = append(out, l)
		}
	}
	return out
}

// ftFind returns the first trace line whose who and text match (regexp on text).
func ftFind(t *testing.T, r *engine.Result, who, re string) (ftLine, bool) {
	t.Helper()
	rx := regexp.MustCompile(re)
	for _, l := range ftParse(t, r) {
		if (who == "" || l.who == who) && rx.MatchString(l.raw) {
			return l, true
		}
	}
	return ftLine{}, false
}

func ftMust(t *testing.T, r *engine.Result, who, re string) ftLine {
	t.Helper()
	l, ok := ftFind(t, r, who, re)
	if !ok {
		t.Fatalf("seed %d: no trace line %s %q in:\n%s", r.Seed, who, re, strings.Join(r.Trace, "\n"))
	}
	return l
}

func ftDump(r *engine.Result) string { return strings.Join(r.Trace, "\n") }

// ftOutcomes runs the seeds and returns, per seed, "pass" or the failure reason.
func ftOutcomes(t *testing.T, s *engine.Sim, seeds int, plan *engine.FaultPlan) []string {
	t.Helper()
	var out []string
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		r := ftRun(t, s, seed, plan)
		switch r.Verdict {
		case engine.VerdictPass:
			out = append(out, "pass")
		case engine.VerdictFail:
			out = append(out, r.Failure.Reason)
		default:
			t.Fatalf("seed %d: verdict %s\n%s", seed, r.Verdict, ftDump(r))
		}
	}
	return out
}

func ftCount(outcomes []string, sub string) int {
	n := 0
	for _, o := range outcomes {
		if strings.Contains(o, sub) {
			n++
		}
	}
	return n
}

// ---- disk: strict_dirs ----

// A program that fsyncs a new file and renames it into place without fsyncing the
// directory is fine on a journaling filesystem (default mode) and loses the file under
// strict_dirs; fsyncing the directory after the rename fixes it.
func TestFaultStrictDirsRename(t *testing.T) {
	crash := ftPlan(ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond))
	const seeds = 6
	t.Run("default mode keeps the rename", func(t *testing.T) {
		out := ftOutcomes(t, ftSim(t, ftDiskConfig("", "-mode", "rename")), seeds, crash)
		if n := ftCount(out, "pass"); n != seeds {
			t.Fatalf("want every seed to pass, got %q", out)
		}
	})
	t.Run("strict_dirs loses it", func(t *testing.T) {
		out := ftOutcomes(t, ftSim(t, ftDiskConfig(`"strict_dirs":true`, "-mode", "rename")), seeds, crash)
		if ftCount(out, "LOST /final.db") == 0 {
			t.Fatalf("want some seed to lose /final.db, got %q", out)
		}
		if ftCount(out, "pass")+ftCount(out, "LOST /final.db") != seeds {
			t.Fatalf("unexpected outcomes %q", out)
		}
	})
	t.Run("strict_dirs with a directory fsync keeps it", func(t *testing.T) {
		out := ftOutcomes(t, ftSim(t, ftDiskConfig(`"strict_dirs":true`, "-mode", "rename", "-dirsync")), seeds, crash)
		if n := ftCount(out, "pass"); n != seeds {
			t.Fatalf("want every seed to pass, got %q", out)
		}
	})
}

// The hashicorp/raft snapshot case: the file inside a new directory is fsynced and the
// directory renamed into place with its parent fsynced, but the directory itself was
// never fsynced, so under strict_dirs it can come back empty.
func TestFaultStrictDirsDirectoryRename(t *testing.T) {
	crash := ftPlan(ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond))
	const seeds = 8
	for _, tc := range []struct {
		name, extra string
		dirsync     bool
		wantLoss    bool
	}{
		{"default mode", "", false, false},
		{"strict_dirs", `"strict_dirs":true`, false, true},
		{"strict_dirs with the directory fsynced", `"strict_dirs":true`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-mode", "dirrename"}
			if tc.dirsync {
				args = append(args, "-dirsync")
			}
			out := ftOutcomes(t, ftSim(t, ftDiskConfig(tc.extra, args...)), seeds, crash)
			lost := ftCount(out, "LOST /snap/state.bin")
			if tc.wantLoss && lost == 0 || !tc.wantLoss && ftCount(out, "pass") != seeds {
				t.Fatalf("outcomes %q", out)
			}
		})
	}
}

// ---- disk: fsync EIO (fsyncgate) ----

func TestFaultFsyncEIO(t *testing.T) {
	crash := ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond)
	// Disk ops of -mode fsyncgate: #1 create /wal, #2 write, #3 fsync.
	eioAtOp := engine.Fault{Kind: engine.FaultFsyncEIO, Node: "disk", DiskOp: 3, Incarnation: 1}
	eioAtTime := engine.Fault{AtNS: int64(50 * time.Millisecond), Kind: engine.FaultFsyncEIO, Node: "disk"}
	for _, tc := range []struct {
		name, onEIO string
		plan        *engine.FaultPlan
		wantLost    bool
	}{
		{"retry trusts the second fsync: data lost", "retry", ftPlan(eioAtOp, crash), true},
		{"retry, EIO planned by time", "retry", ftPlan(eioAtTime, crash), true},
		{"rewrite and fsync again: data kept", "rewrite", ftPlan(eioAtOp, crash), false},
		{"control: no EIO", "retry", ftPlan(crash), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ftSim(t, ftDiskConfig("", "-mode", "fsyncgate", "-on-eio", tc.onEIO))
			for seed := uint64(1); seed <= 3; seed++ {
				r := ftRun(t, s, seed, tc.plan)
				lost := r.Verdict == engine.VerdictFail && strings.Contains(r.Failure.Reason, `LOST /wal: content ""`)
				if lost != tc.wantLost || !lost && r.Verdict != engine.VerdictPass {
					t.Fatalf("seed %d: lost=%v, want %v: %s\n%s", seed, lost, tc.wantLost, r, ftDump(r))
				}
				injected := slices.IndexFunc(r.Faults, func(f engine.Fault) bool { return f.Kind == engine.FaultFsyncEIO }) >= 0
				if injected != (len(tc.plan.Faults) == 2) {
					t.Fatalf("seed %d: applied faults %v", seed, r.Faults)
				}
				if injected {
					ftMust(t, r, "disk#1", `^disk #3 fsync /wal: EIO \(injected\)`)
					ftMust(t, r, "disk#1", `^\| fsync: sync /wal: I/O error$`)
					ftMust(t, r, "disk#1", `^\| second fsync ok$`)
				}
			}
		})
	}
}

// ---- disk: O_SYNC, O_DSYNC, fdatasync ----

// Writes with O_SYNC or O_DSYNC, or followed by fd_datasync, survive a crash without an
// fsync; plain writes may not.
func TestFaultSyncWrites(t *testing.T) {
	crash := ftPlan(ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond))
	const seeds = 8
	for _, how := range []string{"osync", "dsync", "fdatasync", "none"} {
		t.Run(how, func(t *testing.T) {
			out := ftOutcomes(t, ftSim(t, ftDiskConfig("", "-mode", "sync", "-flag", how)), seeds, crash)
			if how != "none" {
				if ftCount(out, "pass") != seeds {
					t.Fatalf("want every seed to keep the data, got %q", out)
				}
				return
			}
			if ftCount(out, "LOST /data") == 0 || ftCount(out, "pass") == 0 {
				t.Fatalf("want plain writes to be lost on some seeds and kept on others, got %q", out)
			}
		})
	}
}

// ---- disk: truncate, allocate, size that outlived its data ----

func TestFaultSizeOutlivesData(t *testing.T) {
	crash := ftPlan(ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond))
	const seeds = 8
	report := func(t *testing.T, s *engine.Sim) []string {
		var out []string
		for seed := uint64(1); seed <= seeds; seed++ {
			r := ftRun(t, s, seed, crash)
			lines := ftOutput(t, r, "disk#2")
			if r.Verdict != engine.VerdictPass || len(lines) != 1 {
				t.Fatalf("seed %d: %s\n%s", seed, r, ftDump(r))
			}
			out = append(out, lines[0].text)
		}
		return out
	}
	t.Run("truncate synced, head written without sync", func(t *testing.T) {
		out := report(t, ftSim(t, ftDiskConfig("", "-mode", "zeros")))
		if ftCount(out, "size 4096 ") != seeds {
			t.Fatalf("the synced size must survive every crash: %q", out)
		}
		if ftCount(out, "head zeros") == 0 || ftCount(out, "head data") == 0 {
			t.Fatalf("want the unsynced head lost (zeros) on some seeds and kept on others: %q", out)
		}
	})
	t.Run("fd_allocate then fsync", func(t *testing.T) {
		out := report(t, ftSim(t, ftDiskConfig("", "-mode", "allocate", "-sync")))
		if ftCount(out, "size 8192") != seeds {
			t.Fatalf("want the allocation to survive: %q", out)
		}
	})
	t.Run("fd_allocate without fsync", func(t *testing.T) {
		out := report(t, ftSim(t, ftDiskConfig("", "-mode", "allocate")))
		if ftCount(out, "size 0") == 0 || ftCount(out, "size 8192") == 0 {
			t.Fatalf("want an unsynced allocation lost on some seeds and kept on others: %q", out)
		}
	})
}

// ---- crashes ----

// Disk ops of -mode log: #1 create /log, then for record k (from 0) #2k+2 write and
// #2k+3 fsync, one record every 10ms from t=100ms.
func ftLogConfig(extra string) string { return ftDiskConfig(extra, "-mode", "log") }

func TestFaultCrashIdle(t *testing.T) {
	s := ftSim(t, ftLogConfig(""))
	r := ftRun(t, s, 1, ftPlan(ftCrash("disk", 125*time.Millisecond, 200*time.Millisecond)))
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, ftDump(r))
	}
	c := ftMust(t, r, "fault", `^crash disk#1 \(idle\)$`)
	st := ftMust(t, r, "disk#2", `^start$`)
	if c.at != 125*time.Millisecond || st.at != 325*time.Millisecond {
		t.Fatalf("crash at %s, restart at %s; want 125ms and 325ms", c.at, st.at)
	}
	// Records 0, 1 and 2 were written and fsynced at 100, 110 and 120ms.
	ftMust(t, r, "disk#2", `^\| recovered 3 records, tail 0 bytes$`)
	if len(r.Faults) != 1 || r.Faults[0].Kind != engine.FaultCrash || r.Faults[0].DiskOp != 0 {
		t.Fatalf("applied faults %+v", r.Faults)
	}

	t.Run("no restart", func(t *testing.T) {
		r := ftRun(t, s, 1, ftPlan(ftCrash("disk", 125*time.Millisecond, 0)))
		if _, ok := ftFind(t, r, "disk#2", `^start$`); ok || r.Verdict != engine.VerdictPass {
			t.Fatalf("a crash without restart delay must leave the node down:\n%s", ftDump(r))
		}
	})
}

func TestFaultCrashDuringDiskOp(t *testing.T) {
	s := ftSim(t, ftLogConfig(""))
	plan := ftPlan(engine.Fault{Kind: engine.FaultCrash, Node: "disk", DiskOp: 12, Incarnation: 1, RestartNS: int64(300 * time.Millisecond)})
	r := ftRun(t, s, 1, plan)
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, ftDump(r))
	}
	// Op #12 is the write of record 5 (bytes 45..54), at 150ms.
	c := ftMust(t, r, "fault", `^crash disk#1 during disk op #12 write /log @45\+9( at \S+)? \(0 of 9 bytes written\)$`)
	st := ftMust(t, r, "disk#2", `^start$`)
	if st.at-c.at != 300*time.Millisecond {
		t.Fatalf("crash at %s, restart at %s: want the 300ms restart delay", c.at, st.at)
	}
	ftMust(t, r, "disk#2", `^\| recovered 5 records, tail 0 bytes$`)
	if len(r.Faults) != 1 || r.Faults[0].DiskOp != 12 || r.Faults[0].Incarnation != 1 || !strings.HasPrefix(r.Faults[0].Where, "write /log @45+9") {
		t.Fatalf("applied faults %+v", r.Faults)
	}
	if got := r.Faults[0].String(); !strings.HasPrefix(got, "150.043ms crash disk during disk op #12 (write /log @45+9") || !strings.HasSuffix(got, "), restart at 450.043ms") {
		t.Fatalf("fault renders as %q", got)
	}

	t.Run("armed by time (mid_op)", func(t *testing.T) {
		// Armed at 125ms: the next disk op is the write of record 3 (#8) at 130ms.
		f := ftCrash("disk", 125*time.Millisecond, 100*time.Millisecond)
		f.MidOp = true
		r := ftRun(t, s, 1, ftPlan(f))
		ftMust(t, r, "fault", `^crash disk#1 during disk op #8 write /log @27\+9`)
		ftMust(t, r, "disk#2", `^\| recovered 3 records, tail 0 bytes$`)
		if len(r.Faults) != 1 || r.Faults[0].DiskOp != 8 || r.Faults[0].ArmedNS != int64(125*time.Millisecond) {
			t.Fatalf("applied faults %+v", r.Faults)
		}
	})

	t.Run("torn writes", func(t *testing.T) {
		// With torn_writes a crash during a write keeps a torn prefix on some seeds;
		// without, never.
		for _, torn := range []bool{false, true} {
			s := ftSim(t, ftLogConfig(fmt.Sprintf(`"faults":{"torn_writes":%v,"tear_unit":1}`, torn)))
			tornSeeds := 0
			for seed := uint64(1); seed <= 10; seed++ {
				r := ftRun(t, s, seed, plan)
				l := ftMust(t, r, "disk#2", `^\| recovered \d+ records, tail \d+ bytes$`)
				if !strings.HasSuffix(l.text, "tail 0 bytes") {
					tornSeeds++
					if !strings.HasPrefix(l.text, "recovered 5 records") {
						t.Fatalf("seed %d: %s", seed, l.text)
					}
				}
			}
			if torn != (tornSeeds > 0) {
				t.Fatalf("torn_writes=%v: %d of 10 seeds left a torn tail", torn, tornSeeds)
			}
		}
	})
}

func TestFaultCrashSeveralNodes(t *testing.T) {
	cfg := ftConfig(ftNode("client", "./wait", "-for", "2s"), "",
		ftNode("d1", "./disk", "-mode", "log"), ftNode("d2", "./disk", "-mode", "log"))
	s := ftSim(t, cfg)
	plan := ftPlan(
		ftCrash("d1", 125*time.Millisecond, 100*time.Millisecond),
		engine.Fault{Kind: engine.FaultCrash, Node: "d2", DiskOp: 10, Incarnation: 1, RestartNS: int64(50 * time.Millisecond)},
		ftCrash("d1", 400*time.Millisecond, 100*time.Millisecond),
		ftCrash("d2", 400*time.Millisecond, 0),
	)
	r := ftRun(t, s, 3, plan)
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, ftDump(r))
	}
	ftMust(t, r, "fault", `^crash d1#1 \(idle\)$`)
	ftMust(t, r, "fault", `^crash d2#1 during disk op #10 write /log @36\+9`)
	ftMust(t, r, "fault", `^crash d1#2 \(idle\)$`)
	ftMust(t, r, "fault", `^crash d2#2 \(idle\)$`)
	ftMust(t, r, "d1#2", `^\| recovered 3 records, tail 0 bytes$`)
	ftMust(t, r, "d1#3", `^\| recovered 3 records, tail 0 bytes$`)
	ftMust(t, r, "d2#2", `^\| recovered 4 records, tail 0 bytes$`)
	if _, ok := ftFind(t, r, "d2#3", `^start$`); ok {
		t.Fatal("d2 was crashed without restart")
	}
	if len(r.Faults) != 4 {
		t.Fatalf("applied faults %+v", r.Faults)
	}
}

// ---- network ----

func ftServer(name string, args ...string) string {
	return ftNode(name, "./net", append([]string{"-role", "server"}, args...)...)
}

func ftClient(args ...string) string {
	return ftNode("client", "./net", append([]string{"-role", "client"}, args...)...)
}

var ftRTT = regexp.MustCompile(`^rtt (\S+) (\d+) (\S+)$`)

type ftPing struct {
	addr string
	seq  int
	rtt  time.Duration
	at   time.Duration // when the client printed it (the answer's arrival)
}

func ftPings(t *testing.T, r *engine.Result) []ftPing {
	var out []ftPing
	for _, l := range ftOutput(t, r, "client") {
		m := ftRTT.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		seq, _ := strconv.Atoi(m[2])
		d, err := time.ParseDuration(m[3])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ftPing{m[1], seq, d, l.at})
	}
	return out
}

// Per-link latency: a latency fault on s2 slows pings to s2 for its duration and leaves
// s1 alone; the config's base latency applies to every link.
func TestFaultLatency(t *testing.T) {
	cfg := ftConfig(ftClient("-targets", "s1:7000,s2:7000", "-n", "30"), "", ftServer("s1"), ftServer("s2"))
	s := ftSim(t, cfg)
	spike := engine.Fault{AtNS: int64(100 * time.Millisecond), Kind: engine.FaultLatency, Node: "s2",
		LatencyNS: int64(50 * time.Millisecond), DurationNS: int64(300 * time.Millisecond)}
	for _, tc := range []struct {
		name string
		plan *engine.FaultPlan
	}{{"latency fault on s2", ftPlan(spike)}, {"control", ftPlan()}} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, s, 1, tc.plan)
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			slow := 0
			for _, p := range ftPings(t, r) {
				// A ping sent while the spike lasts takes >= 2 x 50ms.
				during := p.at-p.rtt >= 100*time.Millisecond && p.at-p.rtt < 400*time.Millisecond
				switch {
				case p.addr == "s2:7000" && during && len(tc.plan.Faults) > 0:
					if p.rtt < 100*time.Millisecond || p.rtt > 110*time.Millisecond {
						t.Fatalf("ping %d to s2 during the spike took %s, want ~100ms", p.seq, p.rtt)
					}
					slow++
				case p.rtt > 10*time.Millisecond:
					t.Fatalf("ping %d to %s at %s took %s, want the base latency", p.seq, p.addr, p.at, p.rtt)
				}
			}
			if len(tc.plan.Faults) > 0 && slow < 2 {
				t.Fatalf("only %d slow pings\n%s", slow, ftDump(r))
			}
			if len(tc.plan.Faults) > 0 {
				ftMust(t, r, "fault", `^latency s2 \+50ms for 300ms$`)
			}
		})
	}
	t.Run("config latency", func(t *testing.T) {
		s := ftSim(t, ftConfig(ftClient("-n", "5"), `"faults":{"latency":"20ms","jitter":"1ns"}`, ftServer("server")))
		r := ftRun(t, s, 1, nil)
		for _, p := range ftPings(t, r) {
			if p.rtt < 40*time.Millisecond || p.rtt > 42*time.Millisecond {
				t.Fatalf("ping %d took %s, want 2 x 20ms", p.seq, p.rtt)
			}
		}
	})
}

// A partition stalls a connection (TCP: no error, no loss) and heal resumes it. A
// one-way partition cuts one direction only: which side saw the ping tells which.
func TestFaultPartition(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-n", "30"), "", ftServer("server", "-log")))
	at, dur := 100*time.Millisecond, 500*time.Millisecond
	heal := at + dur
	part := func(node string, peer string, oneWay bool) *engine.FaultPlan {
		return ftPlan(engine.Fault{AtNS: int64(at), Kind: engine.FaultPartition, Node: node, Peers: []string{peer}, OneWay: oneWay, DurationNS: int64(dur)})
	}
	for _, tc := range []struct {
		name string
		plan *engine.FaultPlan
		// where the stalled ping shows up: "before" heal or "after" heal, on the server
		serverSees string
	}{
		{"symmetric", part("server", "client", false), "after"},
		{"one-way server->client", part("server", "client", true), "before"},
		{"one-way client->server", part("client", "server", true), "after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, s, 2, tc.plan)
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			h := ftMust(t, r, "fault", `^heal `)
			if h.at != heal {
				t.Fatalf("healed at %s, want %s", h.at, heal)
			}
			var stalled *ftPing
			for _, p := range ftPings(t, r) {
				if p.rtt > 100*time.Millisecond {
					if stalled != nil {
						t.Fatalf("two stalled pings")
					}
					stalled = &p
				}
			}
			if stalled == nil || stalled.at < heal || stalled.at-heal > 10*time.Millisecond {
				t.Fatalf("want one ping answered just after the heal at %s, got %+v\n%s", heal, stalled, ftDump(r))
			}
			if _, ok := ftFind(t, r, "client#1", `^\| (read|write|dial) `); ok {
				t.Fatalf("a partition must not break the connection\n%s", ftDump(r))
			}
			got := ftMust(t, r, "server#1", fmt.Sprintf(`^\| got ping %d$`, stalled.seq))
			if (got.at < heal) != (tc.serverSees == "before") {
				t.Fatalf("server got the stalled ping at %s (heal %s), want %s the heal", got.at, heal, tc.serverSees)
			}
		})
	}
}

// A reset fault aborts every connection of the node: the peer sees ECONNRESET.
func TestFaultReset(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-n", "30"), "", ftServer("server")))
	for _, node := range []string{"server", "client"} {
		t.Run("reset "+node, func(t *testing.T) {
			r := ftRun(t, s, 1, ftPlan(engine.Fault{AtNS: int64(105 * time.Millisecond), Kind: engine.FaultReset, Node: node}))
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			ftMust(t, r, "fault", `^reset connections of `+node+`#1$`)
			ftMust(t, r, "client#1", `^\| (read|write) server:7000: reset$`)
		})
	}
	t.Run("control", func(t *testing.T) {
		r := ftRun(t, s, 1, ftPlan())
		if _, ok := ftFind(t, r, "client#1", `reset`); ok || r.Verdict != engine.VerdictPass {
			t.Fatalf("resets without a fault:\n%s", ftDump(r))
		}
	})
}

// While the server is down, connections are reset and dials refused; after its restart
// it listens again and the client gets through.
func TestFaultCrashRefusedAndRelisten(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-n", "30"), "", ftServer("server")))
	r := ftRun(t, s, 1, ftPlan(ftCrash("server", 100*time.Millisecond, 300*time.Millisecond)))
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, ftDump(r))
	}
	ftMust(t, r, "client#1", `^\| (read|write) server:7000: reset$`)
	refused := ftMust(t, r, "client#1", `^\| dial server:7000: refused$`)
	relisten := ftMust(t, r, "server#2", `^listen :7000( at \S+)?$`)
	if refused.at < 100*time.Millisecond || refused.at > 400*time.Millisecond || relisten.at < 400*time.Millisecond {
		t.Fatalf("refused at %s, listening again at %s", refused.at, relisten.at)
	}
	var after int
	for _, p := range ftPings(t, r) {
		if p.at > relisten.at {
			after++
		}
	}
	if after == 0 {
		t.Fatal("no ping answered after the restart")
	}
}

// ---- process and clock ----

// A paused node is not scheduled: its heartbeats stop for the pause.
func TestFaultPause(t *testing.T) {
	s := ftSim(t, ftConfig(ftClient("-heartbeat", "20ms", "-n", "50"), "", ftServer("server", "-heartbeat", "20ms")))
	pause := func(at, d time.Duration) engine.Fault {
		return engine.Fault{AtNS: int64(at), Kind: engine.FaultPause, Node: "server", DurationNS: int64(d)}
	}
	for _, tc := range []struct {
		name string
		plan *engine.FaultPlan
	}{
		{"pause", ftPlan(pause(200*time.Millisecond, 500*time.Millisecond))},
		// A shorter pause inside a longer one does not end it early.
		{"overlapping pauses", ftPlan(pause(200*time.Millisecond, 500*time.Millisecond), pause(300*time.Millisecond, 100*time.Millisecond))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, s, 1, tc.plan)
			if r.Verdict != engine.VerdictPass {
				t.Fatalf("%s\n%s", r, ftDump(r))
			}
			ftMust(t, r, "fault", `^pause server#1 for 500ms$`)
			if l := ftMust(t, r, "fault", `^resume server$`); l.at != 700*time.Millisecond {
				t.Fatalf("resumed at %s, want 700ms", l.at)
			}
			var n int
			for _, l := range ftOutput(t, r, "client#1") {
				if strings.HasPrefix(l.text, "heartbeat gap ") {
					n++
					d, _ := time.ParseDuration(strings.TrimPrefix(l.text, "heartbeat gap "))
					if d < 480*time.Millisecond || d > 530*time.Millisecond {
						t.Fatalf("gap %s, want ~500ms", d)
					}
				}
			}
			if n != 1 {
				t.Fatalf("want one heartbeat gap, got %d\n%s", n, ftDump(r))
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		r := ftRun(t, s, 1, nil)
		if _, ok := ftFind(t, r, "client#1", `gap`); ok || r.Verdict != engine.VerdictPass {
			t.Fatalf("heartbeat gap without a pause:\n%s", ftDump(r))
		}
	})
}

var ftTick = regexp.MustCompile(`^tick (\d+) wall=(-?\d+) mono=(\d+)$`)

type ftTickLine struct {
	n          int
	wall, mono int64 // ms since the node's start, by its own clocks
	at         time.Duration
}

func ftTicks(t *testing.T, r *engine.Result) []ftTickLine {
	var out []ftTickLine
	for _, l := range ftOutput(t, r, "clock") {
		m := ftTick.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		w, _ := strconv.ParseInt(m[2], 10, 64)
		mo, _ := strconv.ParseInt(m[3], 10, 64)
		out = append(out, ftTickLine{n, w, mo, l.at})
	}
	return out
}

func ftClockConfig(extra string) string {
	return ftConfig(ftNode("client", "./wait", "-for", "3s"), extra, ftNode("clock", "./clock", "-n", "20"))
}

// A wall-clock jump moves time.Now by the jump, back or forward; the monotonic clock
// (time.Since, timers) goes on undisturbed.
func TestFaultClockJump(t *testing.T) {
	s := ftSim(t, ftClockConfig(""))
	plan := ftPlan(
		engine.Fault{AtNS: int64(250 * time.Millisecond), Kind: engine.FaultClockJump, Node: "clock", JumpNS: int64(-10 * time.Second)},
		engine.Fault{AtNS: int64(1050 * time.Millisecond), Kind: engine.FaultClockJump, Node: "clock", JumpNS: int64(5 * time.Second)},
	)
	r := ftRun(t, s, 1, plan)
	if r.Verdict != engine.VerdictPass {
		t.Fatalf("%s\n%s", r, ftDump(r))
	}
	ftMust(t, r, "fault", `^wall clock of clock jumps by -10s$`)
	ticks := ftTicks(t, r)
	if len(ticks) != 20 {
		t.Fatalf("%d ticks\n%s", len(ticks), ftDump(r))
	}
	for _, tk := range ticks {
		want := int64(0)
		switch {
		case tk.at > 1050*time.Millisecond:
			want = -5000
		case tk.at > 250*time.Millisecond:
			want = -10000
		}
		if d := tk.wall - tk.mono - want; d < -2 || d > 2 {
			t.Fatalf("tick %d at %s: wall %dms, mono %dms: want wall - mono = %d", tk.n, tk.at, tk.wall, tk.mono, want)
		}
		if want := int64(tk.n) * 100; tk.mono < want || tk.mono > want+5 {
			t.Fatalf("tick %d: monotonic %dms, want ~%d", tk.n, tk.mono, want)
		}
	}
}

// Clock skew: a node whose clock runs fast fires its timers early in global time, and
// its monotonic clock never goes back, even when the skew changes mid-run.
func TestFaultClockSkew(t *testing.T) {
	s := ftSim(t, ftClockConfig(""))
	lastTick := func(t *testing.T, plan *engine.FaultPlan) (*engine.Result, ftTickLine) {
		r := ftRun(t, s, 1, plan)
		if r.Verdict != engine.VerdictPass {
			t.Fatalf("%s\n%s", r, ftDump(r))
		}
		ticks := ftTicks(t, r)
		if len(ticks) != 20 {
			t.Fatalf("%d ticks\n%s", len(ticks), ftDump(r))
		}
		return r, ticks[19]
	}
	t.Run("fast clock", func(t *testing.T) {
		r, last := lastTick(t, ftPlan(engine.Fault{Kind: engine.FaultClockSkew, Node: "clock", SkewPPM: 100000}))
		ftMust(t, r, "fault", `^clock of clock drifts \+100000ppm$`)
		// 2s of the node's time is 2s/1.1 of global time.
		if last.mono < 2000 || last.mono > 2010 || last.at < 1810*time.Millisecond || last.at > 1830*time.Millisecond {
			t.Fatalf("last tick: own clock %dms at global %s; want 2000ms at ~1.818s", last.mono, last.at)
		}
	})
	t.Run("control", func(t *testing.T) {
		_, last := lastTick(t, nil)
		if last.at < 2000*time.Millisecond || last.at > 2020*time.Millisecond {
			t.Fatalf("last tick at %s, want ~2s", last.at)
		}
	})
	t.Run("slowed mid-run", func(t *testing.T) {
		// At 1s the clock slows by 10%: had the skew been applied to the time since the
		// start, the monotonic clock would step back by 100ms (the guest exits 1).
		r, last := lastTick(t, ftPlan(engine.Fault{AtNS: int64(time.Second), Kind: engine.FaultClockSkew, Node: "clock", SkewPPM: -100000}))
		_ = r
		// 1s at the normal rate, then 1s of own time at 0.9: ~1.111s of global time.
		if last.at < 2100*time.Millisecond || last.at > 2125*time.Millisecond {
			t.Fatalf("last tick at %s, want ~2.111s", last.at)
		}
	})
	t.Run("config clock_skew_ppm", func(t *testing.T) {
		s := ftSim(t, ftClockConfig(`"faults":{"clock_skew_ppm":50000}`))
		r := ftRun(t, s, 1, nil)
		ftMust(t, r, "world", `^clock of clock drifts [+-]\d+ppm$`)
	})
}

// ---- fault plans as data ----

// A run's applied faults, saved as JSON and replayed as a plan, give a byte-identical
// trace, for a plan drawn from every rate of the config.
func TestFaultPlanReplayIdentical(t *testing.T) {
	cfg := ftConfig(ftClient("-targets", "s1:7000,s2:7000", "-n", "60", "-every", "30ms"), `"faults":{
		"crash_per_sec":1,"restart_delay":"200ms","torn_writes":true,"fsync_eio":0.05,
		"partition_per_sec":1,"partition_duration":"300ms","one_way_share":0.5,
		"reset_per_sec":1,"pause_per_sec":1,"pause_duration":"200ms",
		"clock_jump_per_sec":1,"clock_skew_ppm":20000,"latency_spike_per_sec":1}`,
		ftServer("s1", "-disk"), ftServer("s2", "-disk"))
	s := ftSim(t, cfg)
	kinds := map[engine.FaultKind]bool{}
	for seed := uint64(1); seed <= 3; seed++ {
		r1 := ftRun(t, s, seed, nil)
		if len(r1.Faults) == 0 || len(ftPings(t, r1)) < 20 {
			t.Fatalf("seed %d: %d faults applied, %d pings answered\n%s", seed, len(r1.Faults), len(ftPings(t, r1)), ftDump(r1))
		}
		for _, f := range r1.Faults {
			kinds[f.Kind] = true
		}
		// Save and load the plan as `replay -save` and `replay -faults` do.
		data, err := json.MarshalIndent(&engine.FaultPlan{Seed: seed, Faults: r1.Faults}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var plan engine.FaultPlan
		if err := json.Unmarshal(data, &plan); err != nil {
			t.Fatal(err)
		}
		for i, f := range plan.Faults {
			if err := f.Validate(); err != nil {
				t.Fatalf("saved fault %d: %v", i, err)
			}
		}
		r2 := ftRun(t, s, seed, &plan)
		if r1.TraceHash != r2.TraceHash || !slices.Equal(r1.Trace, r2.Trace) {
			for i := range min(len(r1.Trace), len(r2.Trace)) {
				if r1.Trace[i] != r2.Trace[i] {
					t.Fatalf("seed %d: replay differs at line %d:\n  %s\n  %s", seed, i+1, r1.Trace[i], r2.Trace[i])
				}
			}
			t.Fatalf("seed %d: replay differs in length: %d vs %d lines", seed, len(r1.Trace), len(r2.Trace))
		}
		if r1.Verdict != r2.Verdict {
			t.Fatalf("seed %d: verdict %s, replayed %s", seed, r1.Verdict, r2.Verdict)
		}
		// The replay applies the same faults, and so saves the same plan.
		d2, _ := json.MarshalIndent(&engine.FaultPlan{Seed: seed, Faults: r2.Faults}, "", "  ")
		if string(data) != string(d2) {
			t.Fatalf("seed %d: replayed faults differ:\n%s\n%s", seed, data, d2)
		}
		// Faults are printed in the trace as they fire.
		for _, f := range r1.Faults {
			if f.Kind == engine.FaultCrash {
				ftMust(t, r1, "fault", `^crash `+f.Node+`#\d+ `)
			}
		}
	}

	// A hand-written plan with every kind, some by time and some by disk op, is saved the
	// same way: as the faults it applied, where they fired.
	ms := func(d int) int64 { return int64(time.Duration(d) * time.Millisecond) }
	hand := ftPlan(
		engine.Fault{AtNS: ms(100), Kind: engine.FaultFsyncEIO, Node: "s1"},
		engine.Fault{AtNS: ms(150), Kind: engine.FaultCrash, Node: "s2", MidOp: true, RestartNS: ms(100)},
		engine.Fault{AtNS: ms(200), Kind: engine.FaultPartition, Node: "s1", Peers: []string{"client"}, OneWay: true, DurationNS: ms(150)},
		engine.Fault{AtNS: ms(320), Kind: engine.FaultPause, Node: "s2", DurationNS: ms(100)},
		engine.Fault{AtNS: ms(300), Kind: engine.FaultClockJump, Node: "s1", JumpNS: -ms(3000)},
		engine.Fault{AtNS: ms(350), Kind: engine.FaultClockSkew, Node: "s2", SkewPPM: -30000},
		engine.Fault{AtNS: ms(400), Kind: engine.FaultLatency, Node: "s1", LatencyNS: ms(20), DurationNS: ms(300)},
		engine.Fault{AtNS: ms(450), Kind: engine.FaultReset, Node: "client"},
		engine.Fault{Kind: engine.FaultCrash, Node: "s1", DiskOp: 20, Incarnation: 1, RestartNS: ms(50)},
	)
	r1 := ftRun(t, s, 7, hand)
	if len(r1.Faults) != len(hand.Faults) {
		t.Fatalf("hand-written plan: %d of %d faults applied: %+v\n%s", len(r1.Faults), len(hand.Faults), r1.Faults, ftDump(r1))
	}
	data, _ := json.Marshal(&engine.FaultPlan{Faults: r1.Faults})
	var saved engine.FaultPlan
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if r2 := ftRun(t, s, 7, &saved); r2.TraceHash != r1.TraceHash || !slices.Equal(r1.Trace, r2.Trace) {
		t.Fatalf("the saved hand-written plan does not replay the run")
	}
	if r3 := ftRun(t, s, 7, hand); r3.TraceHash != r1.TraceHash {
		t.Fatalf("the hand-written plan is not deterministic")
	}

	var got []string
	for k := range kinds {
		got = append(got, string(k))
	}
	slices.Sort(got)
	t.Logf("fault kinds applied over the seeds: %v", got)
	if len(got) < 7 {
		t.Fatalf("want every generated fault kind exercised, got %v", got)
	}
}

// TestFaultTearUnit: a crash during a write, and the crash-time tearing of a pending
// write, cut it only at file offsets that are multiples of faults.tear_unit (512 by
// default: sectors are written whole); tear_unit 1 tears at any byte. The guest syncs
// 100 bytes, then writes 1500 bytes at offset 100 (crossing 512, 1024 and 1536).
func TestFaultTearUnit(t *testing.T) {
	sizes := func(t *testing.T, extra string, midOp bool) map[int]int {
		s := ftSim(t, ftDiskConfig(extra, "-mode", "sectors"))
		// Find the 1500-byte write's op number in a run without faults.
		r := ftRun(t, s, 1, ftPlan())
		w := ftMust(t, r, "disk#1", `^disk #\d+ write /sectors @100\+1500`)
		op, _ := strconv.Atoi(strings.TrimPrefix(strings.Fields(w.raw)[1], "#"))
		got := map[int]int{}
		for seed := uint64(1); seed <= 40; seed++ {
			f := ftCrash("disk", 300*time.Millisecond, 100*time.Millisecond)
			if midOp {
				f = engine.Fault{Kind: engine.FaultCrash, Node: "disk", DiskOp: int64(op), Incarnation: 1, RestartNS: int64(100 * time.Millisecond)}
			}
			r := ftRun(t, s, seed, ftPlan(f))
			l := ftMust(t, r, "disk#2", `^\| size \d+$`)
			n, _ := strconv.Atoi(strings.TrimPrefix(l.text, "size "))
			got[n]++
		}
		return got
	}
	for _, midOp := range []bool{false, true} {
		t.Run(fmt.Sprintf("mid-op %v", midOp), func(t *testing.T) {
			got := sizes(t, `"faults":{"torn_writes":true}`, midOp)
			for n := range got {
				if n != 100 && n != 1600 && n%512 != 0 {
					t.Errorf("tear_unit 512: file cut at %d bytes, not on a sector boundary (%v)", n, got)
				}
			}
			if got[512]+got[1024]+got[1536] == 0 {
				t.Errorf("tear_unit 512: no seed tore the write at a sector boundary: %v", got)
			}
			bytewise := sizes(t, `"faults":{"torn_writes":true,"tear_unit":1}`, midOp)
			odd := 0
			for n, k := range bytewise {
				if n != 100 && n != 1600 && n%512 != 0 {
					odd += k
				}
			}
			if odd == 0 {
				t.Errorf("tear_unit 1: no seed tore the write off a sector boundary: %v", bytewise)
			}
		})
	}
}

// TestFaultRenamedPaths: after a rename of a file, or of a directory above it, the
// trace, fault lines and sync sites name the file by its current path.
func TestFaultRenamedPaths(t *testing.T) {
	s := ftSim(t, ftDiskConfig("", "-mode", "renamed"))
	r := ftRun(t, s, 1, ftPlan())
	ftMust(t, r, "disk#1", `^disk #\d+ write /data/wal @4\+17`)
	ftMust(t, r, "disk#1", `^disk #\d+ fsync /data/wal( at \S+)?$`)
	ftMust(t, r, "disk#1", `^disk #\d+ write /store/wal @21\+16`)
	ftMust(t, r, "disk#1", `^disk #\d+ fsync /store/wal( at \S+)?$`)
	ftMust(t, r, "disk#1", `^disk #\d+ fsync /store( at \S+)?$`)
	last := ftMust(t, r, "disk#1", `^disk #\d+ write /store/wal @37\+4`)
	if _, ok := ftFind(t, r, "disk#1", `(write /data/wal\.tmp @4|fsync /data/wal\.tmp)`); ok {
		t.Fatalf("a write after the rename is traced under the old name:\n%s", ftDump(r))
	}
	op, _ := strconv.Atoi(strings.TrimPrefix(strings.Fields(last.raw)[1], "#"))
	r = ftRun(t, s, 1, ftPlan(engine.Fault{Kind: engine.FaultCrash, Node: "disk", DiskOp: int64(op), Incarnation: 1}))
	ftMust(t, r, "fault", fmt.Sprintf(`^crash disk#1 during disk op #%d write /store/wal @37\+4`, op))
	if len(r.Faults) != 1 || !strings.HasPrefix(r.Faults[0].Where, "write /store/wal @37+4") {
		t.Fatalf("applied faults %+v", r.Faults)
	}
}

// TestDiskLimits: disk_limit_mib and file_limit_mib bound a node's disk and its files;
// a guest that reaches one gets ENOSPC or EFBIG, and the trace names the limit.
func TestDiskLimits(t *testing.T) {
	for _, tc := range []struct {
		extra, errno, trace string
		bytes               string
	}{
		// Unsynced data counts twice (page cache and disk): the 1 MiB disk is full
		// before the file reaches 1 MiB.
		{`"disk_limit_mib":1`, "no space left on device", `: ENOSPC \(disk full: disk_limit_mib is 1, \d+ bytes in use\)$`, `\d+`},
		{`"file_limit_mib":2`, "file too large", `: EFBIG \(file too large: file_limit_mib is 2\)$`, "2097152"},
	} {
		t.Run(tc.extra, func(t *testing.T) {
			s := ftSim(t, ftDiskConfig(tc.extra, "-mode", "fill"))
			r := ftRun(t, s, 1, ftPlan())
			ftMust(t, r, "disk#1", fmt.Sprintf(`^\| write failed after %s bytes: write /fill: (?i:%s)$`, tc.bytes, tc.errno))
			ftMust(t, r, "disk#1", `^disk #\d+ write /fill @\d+\+65536 at \S+`+tc.trace)
		})
	}
}
