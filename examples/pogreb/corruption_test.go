package pogreb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestCorruptionTable checks pogreb's row of the corruption table (docs/findings.md,
// "Corruption table (CORDS-style)"). The representative cell: one transient wrong read
// during recovery, and the segment (intact on disk) is truncated at the record whose
// CRC failed, with acknowledged writes after it. SEEDFALL_CORRUPTION=1 checks every cell.
func TestCorruptionTable(t *testing.T) {
	exampletest.CheckTable(t, []exampletest.Cell{
		{Config: "seedfall.corrupt_read.json", Kind: "corrupt_read", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.read_eio.json", Kind: "read_eio", Seeds: "1-1", Want: "open pogreb: recovering: read /data/pogreb/"},
		{Config: "seedfall.corrupt.json", Kind: "corrupt", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.misdirected_write.json", Kind: "misdirected_write", Seeds: "1-1", Want: "acknowledged write lost"},
		{Config: "seedfall.misdirected_write.json", Kind: "misdirected_write", Seeds: "7-7", Want: "fatal error: out of memory"},
		{Config: "seedfall.lost_write.json", Kind: "lost_write", Seeds: "1-1", Want: "database is corrupted"},
		{Config: "seedfall.write_eio.json", Kind: "write_eio", Seeds: "1-1", Want: "write /data/pogreb/main.pix: I/O error"},
		{Config: "seedfall.slow_io.json", Kind: "slow_io", Seeds: "1-1"},
	})
}
