package exampletest

import (
	"os/exec"
	"strings"
	"testing"
)

// Native runs one of the example's native reproductions (a Go program under native/,
// run on the host against the real library, without seedfall) and returns its output.
// With patches it runs through examples/nativerun, which builds the program against
// copies of the library patched as seedfall patches them.
func Native(t *testing.T, pkg string, patches ...string) string {
	t.Helper()
	args := []string{"run"}
	if len(patches) > 0 {
		args = append(args, "github.com/seedfall/seedfall/examples/nativerun")
		for _, p := range patches {
			args = append(args, "-patch", p)
		}
	}
	args = append(args, pkg)
	cmd := exec.Command("go", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// WantLines fails unless out contains every one of want.
func WantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
