package rosedb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 3 natively, on the host: chunks written after a torn one are unreachable and
// rosedb cannot open; the patch truncates the torn chunk.
func TestNativeTornChunk(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds rosedb natively twice")
	}
	out := exampletest.Native(t, "./native/torn-chunk")
	exampletest.WantLines(t, out, "0 of 5 after it", "0 of 5 acknowledged keys readable")
	out = exampletest.Native(t, "./native/torn-chunk", "patches/wal-truncate-torn-tail.patch")
	exampletest.WantLines(t, out, "5 of 5 after it", "rosedb.Open: ok, 5 of 5 acknowledged keys read back")
}
