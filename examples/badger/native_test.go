package badger_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 33 natively, on the host: the empty WAL or value-log file a kill leaves makes
// Open fail; with the patch, Open succeeds and the ten synced keys are there.
func TestNativeEmptyFile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds badger natively twice")
	}
	out := exampletest.Native(t, "./native/empty-file")
	exampletest.WantLines(t, out,
		"empty memtable WAL: Open: while opening memtables err: while opening fid: 2 err: Create a new file",
		"empty value log: Open: During db.vlog.open err: Open existing file:")
	out = exampletest.Native(t, "./native/empty-file", "patches/fix-empty-file.patch")
	exampletest.WantLines(t, out,
		"empty memtable WAL: Open ok, reopened, 10 of 10 keys",
		"empty value log: Open ok, reopened, 10 of 10 keys")
}
