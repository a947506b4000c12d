package kvcheck_test

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository and run the checker against
// the stores of testdata/inplace. SEEDFALL_LONG=1 widens the sweeps to 100 seeds.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

const (
	inPlace        = "testdata/inplace/inplace.json"            // rewrites a key's file with O_TRUNC, then writes
	inPlaceOld     = "testdata/inplace/inplace.noreadback.json" // the same, checked without the read-back
	inPlaceReplace = "testdata/inplace/inplace.safe.json"       // temporary file, fsync, rename, directory fsync
	readBackFailed = `, server now answers "VAL " (read back after reconnecting, before the next write)`
)

// The negative control of the read-back: a crash in the middle of an in-place rewrite
// leaves an acknowledged key's file durably empty. The checker without the read-back
// retries the PUT on the same key, overwrites the damage and passes every seed; with the
// read-back, the first read after the restart answers the empty value.
func TestReadBackSeesTornOverwrite(t *testing.T) {
	seed := exampletest.LowestFailing(t, inPlace, "1-20")
	one := fmt.Sprintf("%d-%d", seed, seed)
	code, out := exampletest.Run(t, "run", "-q", "-c", inPlace, "-seeds", one)
	exampletest.WantFail(t, code, out, fmt.Sprintf("FAIL seed %d ", seed), "acknowledged write lost: k", readBackFailed,
		"crash server during disk op #")
	code, out = exampletest.Run(t, "run", "-q", "-c", inPlaceOld, "-seeds", one)
	exampletest.WantPass(t, code, out)

	seeds := exampletest.Seeds("1-20", "1-100")
	code, out = exampletest.Run(t, "run", "-q", "-c", inPlaceOld, "-seeds", seeds)
	exampletest.WantPass(t, code, out)
	code, out = exampletest.Run(t, "run", "-q", "-c", inPlace, "-seeds", seeds)
	exampletest.WantFail(t, code, out, readBackFailed)
}

// The positive control: the same files replaced atomically pass with the read-back on,
// under strict_dirs, so the read-back does not fail a store that keeps its promises.
func TestReadBackPassesAtomicReplace(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-c", inPlaceReplace, "-seeds", exampletest.Seeds("1-20", "1-100"))
	exampletest.WantPass(t, code, out)
	code, out = exampletest.Run(t, "replay", "-c", inPlaceReplace, "-seed", "1")
	exampletest.WantPass(t, code, out)
	// The seed did restart the server and read back: a pass without a read-back would
	// prove nothing.
	m := readBacks.FindStringSubmatch(out)
	if m == nil || m[1] == "0" {
		t.Fatalf("replay of seed 1 read nothing back after a reconnection:\n%s", out)
	}
}

var readBacks = regexp.MustCompile(`ok: \d+ keys checked after \d+ puts \(\d+ retries, (\d+) read-backs after a reconnection\)`)

// A persistent read error on an acknowledged key (read_eio with p 1, aimed at k3's file
// of the atomic-replace store) is a failure naming the key and the error. Before, the
// checker retried the GET for ever and the seed ended at the horizon as a liveness
// failure whose signature named the retry, not the key.
func TestPersistentReadErrorFails(t *testing.T) {
	code, out := exampletest.Run(t, "run", "-q", "-c", "testdata/inplace/readerr.json", "-seeds", "1-3")
	exampletest.WantFail(t, code, out,
		`client#1: read of acknowledged key k3 fails: the server answers "ERR read /data/kv/k3: I/O error", 3 times in a row on one connection`,
		"FAIL 3 of 3 seeds failed (1 distinct failure); 0 passed")
	if regexp.MustCompile(`never finished|had not finished`).MatchString(out) {
		t.Fatalf("the read error ended as a liveness failure:\n%s", out)
	}
	// The same store without the fault passes: the failure is the read error's.
	code, out = exampletest.Run(t, "run", "-q", "-c", inPlaceReplace, "-seeds", "1-3")
	exampletest.WantPass(t, code, out)
}
