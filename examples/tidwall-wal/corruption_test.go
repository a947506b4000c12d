package tidwallwal_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestCorruptionTable checks tidwall/wal's row of the corruption table (docs/findings.md,
// "Corruption table (CORDS-style)"). The representative cell: one lost write, and after
// the crash the log hands back its zeros as an empty entry, with no error (tidwall/wal
// claims no checksums). SEEDFALL_CORRUPTION=1 checks every cell.
func TestCorruptionTable(t *testing.T) {
	exampletest.CheckTable(t, []exampletest.Cell{
		{Config: "tidwall.lost_write.json", Kind: "lost_write", Seeds: "1-1", Want: "always violated: every entry the log returns is one the server wrote"},
		{Config: "tidwall.read_eio.json", Kind: "read_eio", Seeds: "1-2", Want: "I/O error"},
		{Config: "tidwall.corrupt.json", Kind: "corrupt", Seeds: "4-4", Want: "log corrupt"},
		{Config: "tidwall.corrupt_read.json", Kind: "corrupt_read", Seeds: "2-2", Want: "acknowledged write lost"},
		{Config: "tidwall.misdirected_write.json", Kind: "misdirected_write", Seeds: "3-3", Want: "log corrupt"},
		{Config: "tidwall.write_eio.json", Kind: "write_eio", Seeds: "2-2"},
		{Config: "tidwall.slow_io.json", Kind: "slow_io", Seeds: "1-1"},
	})
}
