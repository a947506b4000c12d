package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedfall/seedfall/internal/mcpserver"
)

// cmdMCP serves the MCP tools on stdin and stdout until the client disconnects. Stdout
// carries the protocol, so nothing else may write to it.
func cmdMCP(ctx context.Context, args []string, _, stderr io.Writer) int {
	fs := newFlags("mcp", stderr)
	dir := fs.String("dir", "", "working `directory`: tool paths are resolved against it and may not leave it (default: the current directory)")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel runs per tool call")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	srv, err := mcpserver.New(mcpserver.Options{Dir: *dir, Workers: *workers})
	if err != nil {
		fmt.Fprintf(stderr, "seedfall mcp: %v\n", err)
		return exitUsage
	}
	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "seedfall mcp: %v\n", err)
		return exitUsage
	}
	return exitPass
}
