// Command seedfall runs Go services deterministically on wasip1 under a simulated world
// that crashes them, loses their fsyncs and partitions their network.
//
// The command owns the flags, the subcommands and what they print. The simulation is
// the engine's, the sweep driver and the JSON result shapes are internal/cli's (shared
// with the MCP server), and the reports are report's: the command calls them directly,
// with no wrappers or copies of their types.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
