package diskqueue_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 26 natively, on the host's filesystem, with a real SIGKILL at the child's
// first rename (native/no-metadata). strace injects the signal; .ci/run installs it.
func TestNativeKillBeforeFirstMetadata(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed (.ci/run installs it)")
	}
	out := exampletest.Native(t, "./native/no-metadata")
	if strings.Contains(out, "child not killed") {
		t.Skipf("strace could not kill the child here (no ptrace?):\n%s", out)
	}
	exampletest.WantLines(t, out, "on disk: q.diskqueue.000000.dat (47 bytes)\n",
		"acknowledged messages lost: 2 of 3 m2-cc m3-ddd", "q.diskqueue.000000.dat.bad")
	out = exampletest.Native(t, "./native/no-metadata", "patches/fix-missing-metadata.patch")
	exampletest.WantLines(t, out, "skipping to new file", "acknowledged messages lost: 0 of 3")
}

// Finding 27 natively: strace -f records the child's writes and fsyncs; most of its 200
// acknowledgements are written while the message's fsync has not returned; patched, none.
func TestNativeAckBeforeFsync(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed (.ci/run installs it)")
	}
	out := exampletest.Native(t, "./native/ack-before-fsync")
	m := regexp.MustCompile(`acknowledged before their fsync returned: (\d+) of 200`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no count in:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 {
		t.Errorf("unpatched: no acknowledgement before its fsync returned:\n%s", out)
	}
	out = exampletest.Native(t, "./native/ack-before-fsync", "patches/fix-sync-before-ack.patch")
	exampletest.WantLines(t, out, "acknowledged before their fsync returned: 0 of 200")
}
