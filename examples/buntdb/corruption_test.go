package buntdb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestCorruptionTable checks buntdb's row of the corruption table (docs/findings.md,
// "Corruption table (CORDS-style)"). The representative cell: one write the disk
// acknowledged and never stored, and after the crash an acknowledged value is gone
// (buntdb's file is a plain command log: no checksums). SEEDFALL_CORRUPTION=1 checks
// every cell.
func TestCorruptionTable(t *testing.T) {
	exampletest.CheckTable(t, []exampletest.Cell{
		{Config: "seedfall.lost_write.json", Kind: "lost_write", Seeds: "2-2", Want: "acknowledged write lost"},
		{Config: "seedfall.read_eio.json", Kind: "read_eio", Seeds: "11-11", Want: "open buntdb: read /data/bunt.db: I/O error"},
		{Config: "seedfall.corrupt.json", Kind: "corrupt", Seeds: "1-1", Want: "open buntdb: invalid database"},
		{Config: "seedfall.corrupt_read.json", Kind: "corrupt_read", Seeds: "6-6", Want: "open buntdb: invalid database"},
		{Config: "seedfall.misdirected_write.json", Kind: "misdirected_write", Seeds: "5-5", Want: "open buntdb: invalid database"},
		{Config: "seedfall.write_eio.json", Kind: "write_eio", Seeds: "1-1"},
		{Config: "seedfall.slow_io.json", Kind: "slow_io", Seeds: "1-1"},
	})
}
