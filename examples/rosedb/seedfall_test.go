package rosedb_test

import (
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary
// directory and run small sweeps of this example's configs. Each one takes seconds
// to a minute; -short skips the passing sweeps.

// The helpers are shared by the example modules (examples/exampletest).
var (
	sf              = exampletest.Run
	wantFail        = exampletest.WantFail
	wantPass        = exampletest.WantPass
	lowestFailsWith = exampletest.LowestFailsWith
)

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// after the restart are unreachable on the next replay.
//
// Chunks are small and the disk tears only at 512-byte sector boundaries, so few seeds
// tear a chunk: seed 293 is the first that loses a write (README).
func TestWALLosesWrites(t *testing.T) {
	code, out := sf(t, "run", "-c", "wal.json", "-seeds", "293-293")
	wantFail(t, code, out, "FAIL seed 293 ", "acknowledged write lost: ")
}

// rosedb v2.4.0 over the same WAL refuses to open.
func TestRosedbOpenFails(t *testing.T) {
	exampletest.LowestFailsWithIn(t, "rosedb.json", "1-60", "crashed: exit_code(1): open rosedb: invalid crc, the data may be corrupted")
}

// Negative controls: acknowledging before fsync is caught.
func TestNegativeControls(t *testing.T) {
	for _, c := range []string{"wal.nosync.json", "rosedb.nosync.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", "1-2")
		wantFail(t, code, out, "acknowledged write lost: ")
	}
}

// The fix (truncate to the last whole chunk on open, bounds-checked reads, fsync the
// directory when a segment is created) passes, also under strict_dirs.
func TestFixedPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("sweep; skipped with -short")
	}
	for _, c := range []string{"wal.fixed.json", "rosedb.fixed.json", "wal.strict.json", "rosedb.strict.json"} {
		code, out := sf(t, "run", "-c", c, "-seeds", "1-8")
		wantPass(t, code, out)
	}
}
