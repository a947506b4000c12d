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
