package pogreb_test

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
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

// Finding 22 natively, on the host: a record header whose value size claims 2 GiB makes
// recovery allocate it before the CRC check. Under a 1 GiB heap limit (RLIMIT_DATA) the
// process dies with "fatal error: runtime: out of memory", and again at the restart;
// with the patch recovery rejects the header first and stays at a few MB. The
// unlimited 64-bit run (it touches 2.1 GB) and the 32-bit run are SEEDFALL_LONG only.
func TestNativeHeaderOOM(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("native/header-oom reads /proc/self/status")
	}
	out := headerOOM(t, "", "-limit-data", "1024")
	exampletest.WantLines(t, out, "open: pogreb.Open ok, 10 of 10 keys served", "fatal error: runtime: out of memory",
		"step open: the process died: exit status 2", "step open again, as a restart runs it: exit status 2")
	out = headerOOM(t, "patches/fix-record-size-before-alloc.patch", "-limit-data", "1024")
	exampletest.WantLines(t, out, "pogreb: truncated segment 00000-1.psg to offset 960", "open: pogreb.Open ok, 4 of 10 keys served")
	if strings.Contains(out, "out of memory") {
		t.Errorf("patched: %s", out)
	}
	if os.Getenv("SEEDFALL_LONG") == "" {
		return
	}
	out = headerOOM(t, "")
	exampletest.WantLines(t, out, "open: pogreb.Open ok, 4 of 10 keys served", "VmHWM: 2")
	cmd := exec.Command("go", "run", "./native/header-oom")
	cmd.Env = append(os.Environ(), "GOARCH=386")
	b, _ := cmd.CombinedOutput()
	exampletest.WantLines(t, string(b), "linux/386 process", "fatal error: out of memory")
}

// headerOOM runs native/header-oom with args, against the library patched with patch
// if it is not empty (through examples/nativerun, as exampletest.Native does).
func headerOOM(t *testing.T, patch string, args ...string) string {
	t.Helper()
	goArgs := []string{"run"}
	if patch != "" {
		goArgs = append(goArgs, "github.com/seedfall/seedfall/examples/nativerun", "-patch", patch)
	}
	goArgs = append(append(goArgs, "./native/header-oom"), args...)
	out, err := exec.Command("go", goArgs...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(goArgs, " "), err, out)
	}
	return string(out)
}
