package etcdserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary directory and
// run etcd server v3.5.5 (this module) and v3.5.7 (./v3.5.7), unmodified, through embed.
// SEEDFALL_LONG=1 runs the sweeps the README quotes.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// The product page's third problem: etcd 3.5.0-3.5.5 can diverge after a crash during
// defragmentation. Three members, random crashes, n1 defragmented every 10 puts: v3.5.5
// fails (n1 applies puts twice: its revision runs ahead of the others', or past the puts
// ever sent). TestThreeMembersFixed: v3.5.7 passes the same seeds.
func TestThreeMembersDiverge(t *testing.T) {
	// Seed 6 is the first failure on go1.26 and on go1.27: the default run sweeps it alone
	// (three members, each seed some seconds of CPU), SEEDFALL_LONG seeds 1-20.
	seed := exampletest.LowestFailing(t, "seedfall.json", exampletest.Seeds("6-6", "1-20"))
	code, out := exampletest.Run(t, "run", "-c", "seedfall.json", "-seeds", fmt.Sprintf("%d-%d", seed, seed))
	exampletest.WantFail(t, code, out, "n1=")
	if !regexp.MustCompile(`members disagree on the revision|a put was applied twice|acknowledged put lost its revision`).MatchString(out) {
		t.Errorf("seed %d fails, but not with a divergence:\n%s", seed, out)
	}
}

// TestThreeMembersFixed: v3.5.7 passes TestThreeMembersDiverge's first failing seed, the
// same schedule (SEEDFALL_LONG: seeds 1-100). A test of its own so that the v3.5.5 and
// v3.5.7 builds, each some minutes from a cold cache, fall to two runners
// (examples/modules/etcd-server and etcd-server-bbolt).
func TestThreeMembersFixed(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-c", "v3.5.7/seedfall.json", "-seeds", exampletest.Seeds("6-6", "1-100"))
	exampletest.WantPass(t, code, out)
}

// One member, one crash inside a defragmentation: at the first write of the copy
// (db.tmp), after defrag committed the pending puts without the consistent index
// (backend.go:468 calls unsafeCommit, which skips OnPreCommitUnsafe in v3.5.5,
// batch_tx.go:332-335). The restarted member replays those puts from the WAL a second
// time. The crash is placed at the same point of each version's own run, for each of
// its first three defragmentations (six with SEEDFALL_LONG): v3.5.5 fails where puts were
// pending, v3.5.7 never.
func TestCrashInsideDefrag(t *testing.T) {
	defrags := 3
	if os.Getenv("SEEDFALL_LONG") != "" {
		defrags = 6
	}
	for _, c := range []struct {
		cfg  string
		fail bool
	}{{"seedfall.one.json", true}, {"v3.5.7/seedfall.one.json", false}} {
		failed := 0
		for k, op := range defragCopyOps(t, c.cfg, defrags) {
			plan := filepath.Join(t.TempDir(), "defrag-crash.json")
			text := fmt.Sprintf(`{"seed": 1, "faults": [{"kind": "crash", "node": "n1", "incarnation": 1, "disk_op": %d, "restart_after_ns": 130000000}]}`, op)
			if err := os.WriteFile(plan, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := exampletest.Run(t, "replay", "-q", "-c", c.cfg, "-seed", "1", "-faults", plan)
			if code == 0 {
				continue
			}
			failed++
			where := fmt.Sprintf("crash n1 during disk op #%d (write /data/etcd/member/snap/db.tmp.", op)
			exampletest.WantFail(t, code, out, where)
			if !c.fail {
				t.Errorf("%s: a crash inside defragmentation %d fails:\n%s", c.cfg, k+1, out)
			}
		}
		t.Logf("%s: %d of %d crashes inside a defragmentation fail", c.cfg, failed, defrags)
		if c.fail && failed == 0 {
			t.Errorf("%s: none of %d crashes inside a defragmentation fails", c.cfg, defrags)
		}
	}
}

// defragCopyOps replays seed 1 of cfg without faults and returns n1's disk op of the
// first write into the copy of each of its first n defragmentations.
func defragCopyOps(t *testing.T, cfg string, n int) []int {
	t.Helper()
	plan := filepath.Join(t.TempDir(), "none.json")
	if err := os.WriteFile(plan, []byte(`{"seed": 1, "faults": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := exampletest.Run(t, "replay", "-c", cfg, "-seed", "1", "-faults", plan)
	exampletest.WantPass(t, code, out)
	re := regexp.MustCompile(`n1#1 disk #(\d+) write /data/etcd/member/snap/(db\.tmp\.\d+) @`)
	seen := map[string]bool{}
	var ops []int
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		if !seen[m[2]] && len(ops) < n {
			seen[m[2]] = true
			var op int
			fmt.Sscan(m[1], &op)
			ops = append(ops, op)
		}
	}
	if len(ops) < n {
		t.Fatalf("%s: %d defragmentations of n1 in seed 1, want %d", cfg, len(ops), n)
	}
	return ops
}

// The shrunk plan of seed 1 (one member): one idle crash 103 ms after a
// defragmentation, before the next backend commit stores the consistent index. It fails
// v3.5.5 and passes v3.5.7, the same schedule.
func TestShrunkPlan(t *testing.T) {
	plan := exampletest.PerGo(t, "the shrunk plan", map[string]string{"go1.26": "plans/seed-1.shrunk.json", "go1.27": "plans/seed-1.go1.27.shrunk.json"})
	seed, n := exampletest.ReadPlan(t, plan)
	if n != 1 {
		t.Fatalf("%s has %d faults, want 1", plan, n)
	}
	code, out := exampletest.Run(t, "replay", "-q", "-c", "seedfall.one.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantFail(t, code, out, "a put was applied twice")
	code, out = exampletest.Run(t, "replay", "-q", "-c", "v3.5.7/seedfall.one.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantPass(t, code, out)
	// The upstream fix alone (the pre-commit hook moved into unsafeCommit, as v3.5.6
	// has it), on v3.5.5: the root cause is that hook.
	code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.one.hookfix.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantPass(t, code, out)
}

// TestUpstreamFixAlone: v3.5.5 with only etcd's fix of the defragmentation's commit
// (patches/etcd-3.5.5-precommit-hook-in-unsafecommit.patch) passes the seeds v3.5.5
// fails, one member: the failures are that bug's, not the harness's.
func TestUpstreamFixAlone(t *testing.T) {
	seeds := exampletest.Seeds("1-5", "1-16")
	code, out := exampletest.Run(t, "run", "-c", "seedfall.one.json", "-seeds", seeds, "-workers", "2", "-q")
	exampletest.WantFail(t, code, out, "a put was applied twice")
	code, out = exampletest.Run(t, "run", "-c", "seedfall.one.hookfix.json", "-seeds", seeds, "-workers", "2", "-q")
	exampletest.WantPass(t, code, out)
}

// Finding 35 under etcd: bbolt v1.3.6 creates member/snap/db with one write of its first
// four pages and a crash inside it leaves a prefix that no Open takes, so the member
// panics at every start (etcd#16596). v3.5.5 and v3.5.7 alike: the crash-state search the
// Action runs on every push finds it (random crashes start too late to reach the first
// start's write). The plans are the search's two failing states at n1's op 12; with
// bbolt patched (examples/bbolt's fix, backported to v1.3.6) both pass.
func TestBboltTornInit(t *testing.T) {
	for _, c := range []struct{ plan, want string }{
		{"plans/bbolt-torn-init.faults.json", "n1#2 crashed: exit_code(2): panic: failed to open database"},
		{"plans/bbolt-torn-init-freelist.faults.json", "n1#2 crashed: exit_code(2): panic: invalid freelist page: 0, page type is unknown<00>"},
	} {
		for _, cfg := range []string{"seedfall.json", "v3.5.7/seedfall.json"} {
			code, out := exampletest.Run(t, "replay", "-q", "-c", cfg, "-seed", "1", "-faults", c.plan)
			exampletest.WantFail(t, code, out, c.want)
		}
		code, out := exampletest.Run(t, "replay", "-q", "-c", "v3.5.7/seedfall.initfix.json", "-seed", "1", "-faults", c.plan)
		exampletest.WantPass(t, code, out)
	}
}

// TestDirectedDefragKill is finding 32 as a test with its own faults (simtest/): the
// test defragments the member and kills it right after, then restarts it. v3.5.5 fails
// at every seed, with a put applied twice; the same test on v3.5.7 (v3.5.7/simtest) and
// on v3.5.5 with only the upstream fix pass every seed.
func TestDirectedDefragKill(t *testing.T) {
	seeds := exampletest.Seeds("1-4", "1-20")
	code, out := exampletest.Run(t, "test", "./simtest", "-run", "^TestDefragThenKill$", "-seeds", seeds, "-workers", "2", "-q")
	exampletest.WantFail(t, code, out, "a put was applied twice", "kill n1, by the test", "restart n1, by the test")
	if want := fmt.Sprintf("FAIL %s of %s seeds failed (1 distinct failure)", last(seeds), last(seeds)); !strings.Contains(out, want) {
		t.Fatalf("v3.5.5: want every seed to fail (%q):\n%s", want, out)
	}
	code, out = exampletest.Run(t, "test", "./simtest", "-run", "^TestDefragThenKillHookFix$", "-seeds", seeds, "-workers", "2", "-q")
	exampletest.WantPass(t, code, out)
	code, out = exampletest.RunIn(t, "v3.5.7", "test", "./simtest", "-run", "^TestDefragThenKill$", "-seeds", seeds, "-workers", "2", "-q")
	exampletest.WantPass(t, code, out)
}

// last is the last seed of a range "1-N".
func last(seeds string) string { _, n, _ := strings.Cut(seeds, "-"); return n }
