package kvlog_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestCorruptionTable checks kvlog's row of the corruption table (docs/findings.md,
// "Corruption table (CORDS-style)"). The representative cell: one wrong read during
// recovery (corrupt_read, transient: the disk is fine) makes the checksum fail, the
// fixed recovery takes it for a torn tail and truncates the log there, and every
// acknowledged write after it is gone. SEEDFALL_CORRUPTION=1 checks every cell.
func TestCorruptionTable(t *testing.T) {
	exampletest.CheckTable(t, []exampletest.Cell{
		{Config: "seedfall.corrupt_read.json", Kind: "corrupt_read", Seeds: "2-2", Want: "acknowledged write lost"},
		{Config: "seedfall.read_eio.json", Kind: "read_eio", Seeds: "1-2", Want: "read log: read /data/kv.log: I/O error"},
		{Config: "seedfall.corrupt.json", Kind: "corrupt", Seeds: "1-2", Want: "acknowledged write lost"},
		{Config: "seedfall.misdirected_write.json", Kind: "misdirected_write", Seeds: "1-20", Want: "acknowledged write lost"},
		{Config: "seedfall.lost_write.json", Kind: "lost_write", Seeds: "1-1", Want: "always violated: replayed records are well-formed"},
		{Config: "seedfall.write_eio.json", Kind: "write_eio", Seeds: "3-4"},
		{Config: "seedfall.slow_io.json", Kind: "slow_io", Seeds: "1-2"},
	})
}
