package goleveldb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestCorruptionTable checks goleveldb's row of the corruption table (docs/findings.md,
// "Corruption table (CORDS-style)"). The representative cell: one transient wrong read,
// and the block checksum catches it (`corruption on data-block ... checksum mismatch`):
// refused, nothing served wrong. SEEDFALL_CORRUPTION=1 checks every cell.
func TestCorruptionTable(t *testing.T) {
	exampletest.CheckTable(t, []exampletest.Cell{
		{Config: "seedfall.corrupt_read.json", Kind: "corrupt_read", Seeds: "1-1", Want: "checksum mismatch"},
		{Config: "seedfall.read_eio.json", Kind: "read_eio", Seeds: "2-2", Want: "I/O error"},
		{Config: "seedfall.corrupt.json", Kind: "corrupt", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.misdirected_write.json", Kind: "misdirected_write", Seeds: "3-3", Want: "acknowledged write lost"},
		{Config: "seedfall.lost_write.json", Kind: "lost_write", Seeds: "2-2", Want: "acknowledged write lost"},
		{Config: "seedfall.write_eio.json", Kind: "write_eio", Seeds: "5-5", Want: "open leveldb: write /data/leveldb/"},
		{Config: "seedfall.slow_io.json", Kind: "slow_io", Seeds: "2-2", Want: "corrupted or incomplete CURRENT file"},
	})
}
