package pebble_test

import (
	"os"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// These tests build the seedfall CLI from this repository into a temporary directory
// and run small sweeps of this example's configs. SEEDFALL_LONG=1 runs the sweeps the
// README quotes (100 seeds) instead of a few seeds.

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// pebble v2.1.7 and v1.1.5, unmodified and with no port, keep every write made with
// pebble.Sync through crashes and torn writes, also under strict_dirs.
func TestSweepsPass(t *testing.T) {
	for _, c := range []string{"seedfall.json", "seedfall.v1.json", "seedfall.strict.json", "seedfall.v1.strict.json"} {
		t.Run(c, func(t *testing.T) {
			code, out := exampletest.Run(t, "run", "-q", "-workers", "2", "-c", c, "-seeds", exampletest.Seeds("1-3", "1-100"))
			exampletest.WantPass(t, code, out)
		})
	}
}

// A seed's run crashes pebble inside a WAL write, replays the WAL at the restart (pebble's
// own log line), flushes what it replayed to an sstable and compacts: the paths a crash
// test must reach.
func TestRecoveryAndFlushesHappen(t *testing.T) {
	// The sstable the restart writes what it replayed to (v2 numbers it after the
	// memtables it flushed).
	for c, sst := range map[string]string{"seedfall.json": "000005.sst", "seedfall.v1.json": "000004.sst"} {
		t.Run(c, func(t *testing.T) {
			code, out := exampletest.Run(t, "replay", "-c", c, "-seed", "2")
			exampletest.WantPass(t, code, out)
			for _, want := range []string{"fault crash server#1 during disk op", "server#2 start", "replayed 7 keys in 7 batches", "write /data/pebble/" + sst, "pebble: compacted into L"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s seed 2: the trace lacks %q", c, want)
				}
			}
		})
	}
}

// Negative control: with pebble.NoSync an acknowledged write is not yet in the synced
// WAL, and a crash loses it.
func TestNoSyncCaught(t *testing.T) {
	for _, c := range []string{"seedfall.nosync.json", "seedfall.v1.nosync.json"} {
		t.Run(c, func(t *testing.T) {
			seed := exampletest.LowestFailsWithIn(t, c, "1-10", "acknowledged write lost: ")
			t.Logf("%s: first failing seed %d", c, seed)
		})
	}
}
