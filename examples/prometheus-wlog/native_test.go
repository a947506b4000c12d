package prometheuswlog_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 5 natively, on the host: a segment cut one byte into a header reads back an
// empty record; the patch reports the torn header and still reads the writer's own
// zero-length fragment at a page end, which the old patch rejected (Repair then
// deleted two synced records).
func TestNativeTornHeader(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds tsdb/wlog natively three times")
	}
	out := exampletest.Native(t, "./native/torn-header")
	exampletest.WantLines(t, out, `record 3: ""`, "replay: 3 of 3 records read back")
	out = exampletest.Native(t, "./native/torn-header", "patches/fix-torn-header.patch")
	exampletest.WantLines(t, out, "torn record header", "replay: 3 of 3 records read back")
	out = exampletest.Native(t, "./native/torn-header", "patches/old-fix-torn-header-rejects-empty.patch")
	exampletest.WantLines(t, out, "replay: 1 of 3 records read back", "after WL.Repair: 1 of 3 records left")
}

// Finding 21 natively, on the host: a read of segment 0 that fails with EIO is reported
// as a corruption and WL.Repair keeps 39 of 300 cleanly written records, deleting the
// later segments; with the reader patch Repair refuses the error and all 300 stay.
func TestNativeReadEIO(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds tsdb/wlog natively twice")
	}
	out := exampletest.Native(t, "./native/read-eio")
	exampletest.WantLines(t, out, "WL.Repair: ok", "after: 39 of 300 records readable (the sector aside), last segment 1")
	out = exampletest.Native(t, "./native/read-eio", "patches/fix-read-error-not-corruption.patch")
	exampletest.WantLines(t, out, "WL.Repair: cannot handle error: read records: read error in segment 00000000 at 20000", "after: 300 of 300 records readable (the sector aside), last segment 3")
}
