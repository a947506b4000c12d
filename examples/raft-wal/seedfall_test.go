package raftwal_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository and run three hashicorp/raft
// v1.7.2 servers on hashicorp/raft-wal v0.4.2, unmodified, with examples/raft's client as
// the workload. SEEDFALL_LONG=1 runs the sweeps the README quotes.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// Crashes (half of them inside a disk op, torn writes) and partitions: no false alarm.
func TestLinearizable(t *testing.T) {
	exampletest.SweepPasses(t, "seedfall.json", exampletest.Seeds("1-3", "1-100"), true)
}

// Crashes at 2/s with a second's restart delay, durability only (the README's 300).
func TestDurable(t *testing.T) {
	exampletest.SweepPasses(t, "seedfall.durable.json", exampletest.Seeds("1-2", "1-300"), false)
}

// strict_dirs, with examples/raft's snapshot-directory patch (its finding, not this
// store's): raft-wal syncs the directory of every segment it creates and of wal-meta.db.
func TestStrictDirs(t *testing.T) {
	exampletest.SweepPasses(t, "seedfall.strict.json", exampletest.Seeds("1-3", "1-100"), true)
}

// The negative control: segment files whose Sync does nothing. Entries are acknowledged
// before they are durable, and a crash loses them: raft restarts on a log whose last
// entries are gone (or the check finds writes gone).
func TestNoSyncCaught(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-c", "seedfall.nosync.json", "-seeds", "1-3")
	exampletest.WantFail(t, code, out, "FAIL 3 of 3 seeds failed")
	if !regexp.MustCompile(`raft: failed to get last log at index \d+: log not found|acknowledged write lost`).MatchString(out) {
		t.Errorf("nosync fails, but not with lost writes:\n%s", out)
	}
}

// hashicorp/raft-wal#31, fixed in v0.4.1: a tail truncation (raft clearing a follower's
// conflicting suffix) marked the tail segment sealed without writing its index block,
// and the next start panics with "sealed segment has no index block". With v0.4.1's fix
// taken out again (patches/revert-forceseal.patch), a random sweep finds it; with the
// fix, the same seed passes.
func TestForceSealRevertedCaught(t *testing.T) {
	seed := exampletest.PerGo(t, "the lowest failing seed of seedfall.forceseal-reverted.json 1-300", map[string]int{"go1.26": 35, "go1.27": 263})
	code, out := exampletest.Run(t, "run", "-c", "seedfall.forceseal-reverted.json", "-seeds", fmt.Sprint(seed))
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), "crashed: exit_code(2): panic: sealed segment has no index block (in github.com/hashicorp/raft.NewRaft")
	// The trace: a follower clears its log's conflicting suffix, and its next start
	// cannot read the segment the truncation sealed.
	code, out = exampletest.Run(t, "replay", "-c", "seedfall.forceseal-reverted.json", "-seed", fmt.Sprint(seed))
	exampletest.WantFail(t, code, out, "raft: clearing log suffix", `error="sealed segment has no index block"`)
	code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.json", "-seed", fmt.Sprint(seed))
	exampletest.WantPass(t, code, out)
}

// sealingWrite returns the disk op number of the write that seals n1's first segment in
// cfg's seed 1 run without faults (the write that runs past the 16 KiB segment's end).
func sealingWrite(t *testing.T, cfg string) int {
	t.Helper()
	plan := filepath.Join(t.TempDir(), "none.faults.json")
	if err := os.WriteFile(plan, []byte(`{"seed": 1, "faults": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := exampletest.Run(t, "replay", "-c", cfg, "-seed", "1", "-faults", plan)
	exampletest.WantPass(t, code, out)
	re := regexp.MustCompile(`n1#1 disk #(\d+) write /raft/wal/0+1-0+\.wal @(\d+)\+(\d+) `)
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		op, _ := strconv.Atoi(m[1])
		off, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		if off+n > 16<<10 {
			return op
		}
	}
	t.Fatalf("no write past segment 1's end in seed 1's run:\n%s", out)
	return 0
}

// Finding 36: a power loss at the append that seals a segment, after its fsync or inside
// its write, and before the rotation commits the seal to wal-meta.db, leaves a WAL whose
// every append fails with "segment is sealed", for good (native_test.go reproduces it on
// this machine's file system). One server, so that nothing masks it: its client gets no
// answer. The crash-state search of the sealing write and its fsync finds it; with
// patches/fix-sealed-tail-recovery.patch no state fails.
func TestSealedTailFinding(t *testing.T) {
	op := sealingWrite(t, "seedfall.one.json")
	ops := fmt.Sprintf("%d-%d", op, op+1)
	out := filepath.Join(t.TempDir(), "crashes")
	code, res := exampletest.Run(t, "crashes", "-c", "seedfall.one.json", "-seed", "1", "-own-faults=false", "-ops", ops, "-out", out)
	exampletest.WantFail(t, code, res, "VULNERABLE raft-wal@v0.4.2/segment/writer.go:440", "VULNERABLE raft-wal@v0.4.2/fs/file.go:32", "no definite answer from any server")
	plans, err := filepath.Glob(filepath.Join(out, fmt.Sprintf("seed-1.inc-1.op-%d.*.faults.json", op+1)))
	if err != nil || len(plans) == 0 {
		t.Fatalf("no plan of a failing state at op %d in %s: %v", op+1, out, err)
	}
	code, res = exampletest.Run(t, "replay", "-c", "seedfall.one.json", "-seed", "1", "-faults", plans[0])
	exampletest.WantFail(t, code, res, `raft: failed to commit logs: error="unable to store logs within log store, err: \"segment is sealed\""`)
	code, res = exampletest.Run(t, "crashes", "-c", "seedfall.one.fixed.json", "-seed", "1", "-own-faults=false", "-ops", ops, "-out", filepath.Join(t.TempDir(), "fixed"))
	exampletest.WantPass(t, code, res)
	if !strings.Contains(res, "0 vulnerable sites at 2 sites") {
		t.Errorf("the patched WAL's search did not cover the same two sites:\n%s", res)
	}
}

// The finding in hashicorp/raft v1.7.2 (README, "Finding 39"): a crash inside the first
// BootstrapCluster, after CurrentTerm 1 is committed (api.go:262) and before the
// configuration entry is stored (api.go:278), leaves a lone server with a term and no
// configuration: every later bootstrap returns ErrCantBootstrap, and the server logs
// "no known peers, aborting election" at each start and never elects a leader, so its
// client gets no answer. plans/bootstrap-crash.faults.json is the failing state of the
// crash-state search of seed 1's disk op #39 (the fdatasync of wal-meta.db that commits
// the term; the same plan under go1.26 and go1.27); with patches/fix-bootstrap-order.patch
// the same crash lands between the reordered writes (the entry stored, the term not) and
// the server elects itself. native_test.go shows it with real SIGKILLs.
func TestBootstrapCrashFinding(t *testing.T) {
	const plan = "plans/bootstrap-crash.faults.json"
	code, out := exampletest.Run(t, "replay", "-c", "seedfall.one.json", "-seed", "1", "-faults", plan)
	exampletest.WantFail(t, code, out,
		"fault crash n1#1 during disk op #39 fdatasync /raft/wal/wal-meta.db at go.etcd.io/bbolt@v1.3.6/bolt_linux.go:9",
		"n1#2 | [INFO]  raft: initial configuration: index=0 servers=[]",
		"n1#2 | [WARN]  raft: no known peers, aborting election",
		"n1#3 | [WARN]  raft: no known peers, aborting election",
		": no definite answer from any server for 1m0s")
	if strings.Contains(out, "raft: election won") {
		t.Errorf("the unpatched server elected a leader after the crash:\n%s", out)
	}
	code, out = exampletest.Run(t, "replay", "-c", "seedfall.one.bootfix.json", "-seed", "1", "-faults", plan)
	exampletest.WantPass(t, code, out)
	exampletest.WantLines(t, out,
		"fault crash n1#1 during disk op #39 write /raft/wal/wal-meta.db",
		`n1#2 | [INFO]  raft: initial configuration: index=1 servers="[{Suffrage:Voter ID:n1 Address:n1:7000}]"`,
		"n1#2 | [INFO]  raft: election won: term=2 tally=1")
}

// The crash-state search of the first start's two bootstrap writes: n1#1's disk ops
// 35-42 of seed 1, without the seed's own faults. Unpatched they are the bolt commit of
// CurrentTerm 1 (35-39) and the configuration entry's segment write and fsyncs (40-42),
// and the search finds the finding at two sites: the commit's fdatasync (#39, the plan
// above) and its meta page torn after the first sector (#38). Patched the order is the
// entry (35-37), then the term (38-42), and no state fails, each op's states run
// (-per-op). SEEDFALL_LONG=1 also searches ops 30-60 patched with the seed's own faults:
// every write of the first start, from NewRaft's CurrentTerm 0 to the first election's.
func TestBootstrapCrashSearch(t *testing.T) {
	code, res := exampletest.Run(t, "crashes", "-c", "seedfall.one.json", "-seed", "1", "-own-faults=false", "-ops", "35-42", "-out", filepath.Join(t.TempDir(), "unpatched"))
	exampletest.WantFail(t, code, res,
		"VULNERABLE go.etcd.io/bbolt@v1.3.6/bolt_linux.go:9: 1 of 1 states fail (disk ops #39/1)",
		"VULNERABLE go.etcd.io/bbolt@v1.3.6/tx.go:591: 1 of 1 states fail (disk ops #38/1)",
		"no definite answer from any server for 1m0s", "2 vulnerable sites at 4 sites")
	t.Logf("unpatched, ops 35-42:\n%s", lastLines(res, 1))
	searches := [][]string{{"-own-faults=false", "-per-op", "-ops", "35-42"}}
	if os.Getenv("SEEDFALL_LONG") != "" {
		searches = append(searches, []string{"-ops", "30-60"})
	}
	for i, s := range searches {
		args := append([]string{"crashes", "-c", "seedfall.one.bootfix.json", "-seed", "1", "-out", filepath.Join(t.TempDir(), fmt.Sprint("bootfix-", i))}, s...)
		code, res := exampletest.Run(t, args...)
		exampletest.WantPass(t, code, res)
		if !regexp.MustCompile(`0 vulnerable sites at \d+ sites, 0 of [1-9]\d* states failing`).MatchString(res) {
			t.Errorf("patched, %s: no summary of a search that ran states:\n%s", strings.Join(s, " "), res)
		}
		t.Logf("patched, %s:\n%s", strings.Join(s, " "), lastLines(res, 1))
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
