package main

import (
	"context"
	"fmt"
	"io"
)

func todo(name string) func(context.Context, []string, io.Writer, io.Writer) int {
	return func(_ context.Context, _ []string, _, stderr io.Writer) int {
		fmt.Fprintf(stderr, "%s: not yet\n", name)
		return exitUsage
	}
}

var cmdMCP = todo("mcp")
