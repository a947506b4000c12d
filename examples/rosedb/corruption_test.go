package rosedb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestCorruptionTable checks rosedb's two rows of the corruption table (docs/findings.md,
// "Corruption table (CORDS-style)"): the database (rosedb.<fault>.json) and its WAL alone
// (wal.<fault>.json), both with the torn-tail patch. The representative cells: one bad
// sector in a segment, and the patch, which truncates at the first chunk whose CRC fails
// (it cannot tell a corrupt chunk from a torn tail), drops acknowledged writes.
// SEEDFALL_CORRUPTION=1 checks every cell.
func TestCorruptionTable(t *testing.T) {
	t.Run("rosedb", func(t *testing.T) {
		exampletest.CheckTable(t, []exampletest.Cell{
			{Config: "rosedb.corrupt.json", Kind: "corrupt", Seeds: "1-1", Want: "acknowledged write lost"},
			{Config: "rosedb.read_eio.json", Kind: "read_eio", Seeds: "1-1", Want: "read /data/rosedb/000000001.SEG: I/O error"},
			{Config: "rosedb.corrupt_read.json", Kind: "corrupt_read", Seeds: "2-2", Want: "open rosedb: invalid crc"},
			{Config: "rosedb.misdirected_write.json", Kind: "misdirected_write", Seeds: "3-3", Want: "read of acknowledged key k0 fails"},
			{Config: "rosedb.lost_write.json", Kind: "lost_write", Seeds: "1-1", Want: "acknowledged write lost"},
			{Config: "rosedb.write_eio.json", Kind: "write_eio", Seeds: "2-2"},
			{Config: "rosedb.slow_io.json", Kind: "slow_io", Seeds: "1-1"},
		})
	})
	t.Run("wal", func(t *testing.T) {
		exampletest.CheckTable(t, []exampletest.Cell{
			{Config: "wal.corrupt_read.json", Kind: "corrupt_read", Seeds: "1-1", Want: "acknowledged write lost"},
			{Config: "wal.read_eio.json", Kind: "read_eio", Seeds: "1-1", Want: "open wal: read /data/wal/000000001.SEG: I/O error"},
			{Config: "wal.corrupt.json", Kind: "corrupt", Seeds: "1-1", Want: "acknowledged write lost"},
			{Config: "wal.misdirected_write.json", Kind: "misdirected_write", Seeds: "3-3", Want: "acknowledged write lost"},
			{Config: "wal.lost_write.json", Kind: "lost_write", Seeds: "1-1", Want: "acknowledged write lost"},
			{Config: "wal.write_eio.json", Kind: "write_eio", Seeds: "2-2"},
			{Config: "wal.slow_io.json", Kind: "slow_io", Seeds: "1-1"},
		})
	})
}
