package nutsdb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 8 natively, on the host: a torn last entry makes Open fail with a crc error;
// the patch ends the log there and keeps the 9 acknowledged keys.
func TestNativeTornTail(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds nutsdb natively twice")
	}
	out := exampletest.Native(t, "./native/torn-tail")
	exampletest.WantLines(t, out, "crc error: 0 of 9 acknowledged keys readable")
	out = exampletest.Native(t, "./native/torn-tail", "patches/fix-torn-tail.patch")
	exampletest.WantLines(t, out, "nutsdb.Open: ok, 9 of 9 acknowledged keys read back")
}
