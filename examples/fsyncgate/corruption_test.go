package fsyncgate_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestCorruptionTable checks fsyncgate's row of the corruption table (docs/findings.md,
// "Corruption table (CORDS-style)"). The representative cell: one sector corrupted on the
// device, the recovery keeps the records before it and rewrites only those, and the
// acknowledged records after it are gone. SEEDFALL_CORRUPTION=1 checks every cell.
func TestCorruptionTable(t *testing.T) {
	exampletest.CheckTable(t, []exampletest.Cell{
		{Config: "seedfall.corrupt.json", Kind: "corrupt", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.read_eio.json", Kind: "read_eio", Seeds: "6-6", Want: "fail-stop restart loop"},
		{Config: "seedfall.corrupt_read.json", Kind: "corrupt_read", Seeds: "2-2", Want: "acknowledged write lost"},
		{Config: "seedfall.misdirected_write.json", Kind: "misdirected_write", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.lost_write.json", Kind: "lost_write", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.write_eio.json", Kind: "write_eio", Seeds: "2-2", Want: "fail-stop restart loop"},
		{Config: "seedfall.slow_io.json", Kind: "slow_io", Seeds: "1-1"},
	})
}
