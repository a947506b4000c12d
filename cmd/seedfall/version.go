package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"

	"github.com/seedfall/seedfall/engine"
)

// cmdVersion prints the version that results, plans and baselines record.
func cmdVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", stderr)
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	fmt.Fprintf(stdout, "seedfall %s (built with %s, %s/%s)\n", engine.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	// The nodes are built by the toolchain the go command picks here (go.mod's go and
	// toolchain lines, GOTOOLCHAIN), which results and plans record: say which.
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		fmt.Fprintf(stdout, "nodes here are built with %s (go env GOVERSION)\n", v)
	} else {
		fmt.Fprintf(stdout, "nodes here: no Go toolchain (go env GOVERSION: %v); seedfall builds nodes with the go command\n", err)
	}
	return exitPass
}
