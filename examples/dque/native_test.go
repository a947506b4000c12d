package dque_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// strace injects a real SIGKILL into a child process at one syscall; .ci/run installs it.
func needStrace(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed (.ci/run installs it)")
	}
}

// Finding 28 natively: the child is killed between the fourth item's length and its
// bytes; Open fails with ErrCorruptedSegment and the three acknowledged items are
// unreadable. Patched, all three are delivered.
func TestNativeTornRecord(t *testing.T) {
	needStrace(t)
	out := exampletest.Native(t, "./native/torn-record")
	if strings.Contains(out, "child not killed") {
		t.Skipf("strace could not kill the child here (no ptrace?):\n%s", out)
	}
	exampletest.WantLines(t, out, "on disk: 0000000000001.dque (145 bytes)",
		"is corrupted: error reading gob data from file: EOF (ErrCorruptedSegment: true)",
		"acknowledged items unreadable: 3 of 3")
	out = exampletest.Native(t, "./native/torn-record", "patches/fix-torn-record.patch")
	exampletest.WantLines(t, out, `dequeued ["m0-aaaa" "m1-bbbb" "m2-cccc"]`, "acknowledged items lost: 0 of 3")
}

// Finding 29 natively: the child is killed at the unlink of the queue's only segment,
// which its last Dequeue emptied; the next Open fails (segment 2 does not exist), the one
// after it succeeds. Patched, the first Open succeeds.
func TestNativeOnlySegment(t *testing.T) {
	needStrace(t)
	out := exampletest.Native(t, "./native/only-segment")
	if strings.Contains(out, "child not killed") {
		t.Skipf("strace could not kill the child here (no ptrace?):\n%s", out)
	}
	exampletest.WantLines(t, out, "child: enqueued m0 m1 m2; dequeued m0; dequeued m1;, killed at its first unlink",
		"open 1: unable to create queue segment in ", "file does not exist: ", "0000000000002.dque",
		"open 2: ok, segments 1-1, Size() = 0")
	out = exampletest.Native(t, "./native/only-segment", "patches/fix-only-segment.patch")
	exampletest.WantLines(t, out, "open 1: ok, segments 2-2, Size() = 0", "open 2: ok, segments 2-2, Size() = 0")
}
