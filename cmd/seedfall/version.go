package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/seedfall/seedfall/engine"
)

// cmdVersion prints the version that results, plans and baselines record.
func cmdVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", stderr)
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	fmt.Fprintf(stdout, "seedfall %s (built with %s, %s/%s)\n", engine.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitPass
}
