package tidwallwal_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 1 natively, on the host: a partial entry at the end of the log makes Open
// fail; the patch truncates it and keeps the 10 acknowledged entries.
func TestNativeTornTail(t *testing.T) {
	out := exampletest.Native(t, "./native/torn-tail")
	exampletest.WantLines(t, out, "wal.Open: log corrupt: 0 of 10 acknowledged entries readable")
	out = exampletest.Native(t, "./native/torn-tail", "patches/fix-truncate-and-dirsync.patch")
	exampletest.WantLines(t, out, "wal.Open: ok, 10 of 10 acknowledged entries read back", "entry 11 written again after the repair")
}
