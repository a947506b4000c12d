package pogreb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 10 natively, on the host: after a recovery that truncated a torn tail, a
// process exit without Close loses every synced write made since; the patch keeps them.
func TestNativeRecoveryHole(t *testing.T) {
	out := exampletest.Native(t, "./native/recovery-hole")
	exampletest.WantLines(t, out, "after reopening: 10 of 10 a-keys survive", "after reopening: 0 of 10 b-keys survive")
	out = exampletest.Native(t, "./native/recovery-hole", "patches/fix-recovery-truncate.patch")
	exampletest.WantLines(t, out, "after reopening: 10 of 10 a-keys survive", "after reopening: 10 of 10 b-keys survive")
}
