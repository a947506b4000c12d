package nutsdb_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestCorruptionTable checks nutsdb's row of the corruption table (docs/findings.md,
// "Corruption table (CORDS-style)"). The representative cell: one transient wrong read
// while nutsdb rebuilds its index at start, and acknowledged writes are gone (the disk is
// intact). SEEDFALL_CORRUPTION=1 checks every cell, among them the panic in
// (*Bucket).Decode that a wrong read of bucket.Meta causes.
func TestCorruptionTable(t *testing.T) {
	exampletest.CheckTable(t, []exampletest.Cell{
		{Config: "seedfall.corrupt_read.json", Kind: "corrupt_read", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.corrupt_read.json", Kind: "corrupt_read", Seeds: "19-19", Want: "panic: runtime error: slice bounds out of range"},
		{Config: "seedfall.read_eio.json", Kind: "read_eio", Seeds: "1-1", Want: "db.buildIndexes error: read /data/nutsdb/0.dat: I/O error"},
		{Config: "seedfall.corrupt.json", Kind: "corrupt", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.misdirected_write.json", Kind: "misdirected_write", Seeds: "3-3", Want: "acknowledged write lost"},
		{Config: "seedfall.lost_write.json", Kind: "lost_write", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.write_eio.json", Kind: "write_eio", Seeds: "13-13", Want: "bucket.Meta: I/O error"},
		{Config: "seedfall.slow_io.json", Kind: "slow_io", Seeds: "1-1"},
	})
}

// Finding 19: a wrong read of bucket.Meta makes Open panic in (*Bucket).Decode, which
// runs before the CRC check. The shrunk plan (an idle crash, then one wrong read at the
// next start) panics unpatched; with patches/fix-bucket-decode-before-crc.patch the same
// plan ends in the error the CRC check returns.
func TestBucketDecodePanic(t *testing.T) {
	const plan = "plans/corrupt_read-seed19.shrunk.json"
	seed, _ := exampletest.ReadPlan(t, plan)
	code, out := exampletest.Run(t, "replay", "-q", "-c", "seedfall.corrupt_read.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantFail(t, code, out, "panic: runtime error: slice bounds out of range", "(*Bucket).Decode")
	code, out = exampletest.Run(t, "replay", "-q", "-c", "seedfall.corrupt_read.decodefix.json", "-seed", fmt.Sprint(seed), "-faults", plan)
	exampletest.WantFail(t, code, out, "open nutsdb: db.rebuildBucketManager err:bucket crc invalid")
	if strings.Contains(out, "panic") {
		t.Fatalf("patched: still panics:\n%s", out)
	}
}
