package bbolt_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary directory
// and run small sweeps of this example's configs. SEEDFALL_LONG=1 runs the sweeps the
// README quotes (300 seeds) instead of a few seeds.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// bbolt, unmodified (its flock and mmap through seedfall's wasip1 platform layer),
// keeps every acknowledged write under crashes, torn writes and lost unsynced writes,
// with the array and map freelists and with NoFreelistSync.
func TestPasses(t *testing.T) {
	for _, c := range []string{"seedfall.json", "seedfall.nofreelistsync.json", "seedfall.freelistmap.json"} {
		code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", c, "-seeds", exampletest.Seeds("1-8", "1-300"))
		exampletest.WantPass(t, code, out)
	}
}

// The same server with bbolt v1.5.0 (the module in v1.5/ requires it): it passes, its
// NoSync control fails, and finding 31 is still there.
func TestV15(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "v1.5/seedfall.json", "-seeds", exampletest.Seeds("1-8", "1-300"))
	exampletest.WantPass(t, code, out)
	code, out = exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "v1.5/seedfall.nosync.json", "-seeds", "1-5")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
	code, out = exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "v1.5/seedfall.strict.json", "-seeds", "1-20")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
}

// Negative control: DB.NoSync commits without fdatasync; a crash loses acknowledged
// writes.
func TestNegativeControlNoSync(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.nosync.json", "-seeds", "1-5")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
}

// Finding 31: Open creates the database file and never syncs its directory, so under
// strict_dirs a power loss can take the whole file, and every write acknowledged into
// it, away. The patch syncs the directory after init; it passes the same sweep.
func TestStrictDirsLosesTheFile(t *testing.T) {
	seed := exampletest.LowestFailsWithIn(t, "seedfall.strict.json", "1-20", "acknowledged write lost: ")
	code, out := exampletest.Run(t, "replay", "-c", "seedfall.strict.json", "-seed", fmt.Sprint(seed))
	exampletest.WantFail(t, code, out, "server#2 disk #1 create /data/bolt.db")
	code, out = exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.strict.fixed.json", "-seeds", exampletest.Seeds("1-20", "1-300"))
	exampletest.WantPass(t, code, out)
}

// Finding 35: Open creates the database with one write of its first four pages (init,
// db.go:655) and syncs it; a crash inside that write leaves a prefix, and every later
// Open of it fails ("invalid database") or panics (the freelist page missing). Random
// crashes do not reach it (faults start after the first 50ms, init's write is at 10µs);
// the crash-state search the Action runs on every push finds it at its first op. The
// plans are the search's two failing states; with the patch (a file shorter than init's
// four pages whose first meta page is init's own is initialized again) both pass, and
// the search finds nothing over the same ops.
func TestTornInit(t *testing.T) {
	for _, c := range []struct{ plan, want string }{
		{"plans/torn-init.faults.json", "server#2 crashed: exit_code(1): open bbolt: invalid database"},
		{"plans/torn-init-freelist.faults.json", "server#2 crashed: exit_code(2): panic: invalid freelist page: 0, page type is unknown<00>"},
	} {
		code, out := exampletest.Run(t, "replay", "-q", "-c", "seedfall.json", "-seed", "1", "-faults", c.plan)
		exampletest.WantFail(t, code, out, c.want)
		code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.fixed.json", "-seed", "1", "-faults", c.plan)
		exampletest.WantPass(t, code, out)
	}
	args := []string{"crashes", "-seed", "1", "-own-faults=false", "-ops", "1-8", "-workers", "2"}
	code, out := exampletest.Run(t, append(args, "-c", "seedfall.json", "-out", t.TempDir())...)
	exampletest.WantFail(t, code, out, "VULNERABLE go.etcd.io/bbolt@v1.4.3/db.go:655: 2 of ", "open bbolt: invalid database")
	code, out = exampletest.Run(t, append(args, "-c", "seedfall.fixed.json", "-out", t.TempDir())...)
	if code != 0 {
		t.Fatalf("the patched config has failing crash states (exit %d):\n%s", code, out)
	}
	code, out = exampletest.Run(t, "run", "-q", "-workers", "2", "-c", "seedfall.fixed.json", "-seeds", exampletest.Seeds("1-8", "1-300"))
	exampletest.WantPass(t, code, out)
}

// Finding 35 natively, on the host: each prefix of init's write that a crash can leave
// makes Open fail or kills the process (SIGBUS, reading the missing pages through the
// mapping); with the patch every prefix opens and takes a write.
func TestNativeTornInit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds bbolt natively twice")
	}
	out := exampletest.Native(t, "./native/torn-init")
	exampletest.WantLines(t, out,
		"init cut at 512 of 16384 bytes: Open: invalid database",
		"init cut at 4096 of 16384 bytes: Open: file size too small 4096",
		"init cut at 8192 of 16384 bytes: the process dies (exit status 2): [signal SIGBUS",
		"init cut at 12288 of 16384 bytes: the process dies (exit status 2): [signal SIGBUS")
	out = exampletest.Native(t, "./native/torn-init", "patches/fix-torn-init.patch")
	for _, n := range []int{512, 4096, 8192, 12288} {
		exampletest.WantLines(t, out, fmt.Sprintf("init cut at %d of 16384 bytes: Open ok, a key written and read back (\"v\")", n))
	}
}
