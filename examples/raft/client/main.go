// Command client is the workload of the raft example (package raftcheck): -workers
// concurrent clients each send -ops operations to the servers, record them for the kv
// linearizability model and check at the end that no acknowledged write was lost.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seedfall/seedfall/examples/raft/raftcheck"
)

func main() {
	o := raftcheck.Defaults
	flag.StringVar(&o.Nodes, "nodes", o.Nodes, "comma-separated server node names")
	flag.IntVar(&o.Port, "port", o.Port, "line API port of the servers")
	flag.IntVar(&o.Workers, "workers", o.Workers, "concurrent clients")
	flag.IntVar(&o.Ops, "ops", o.Ops, "operations per client")
	flag.IntVar(&o.Keys, "keys", o.Keys, "keys: half take PUTs (k0, k1, ...), half APPENDs (a0, a1, ...)")
	flag.DurationVar(&o.Pause, "pause", o.Pause, "each client pauses up to this long between operations")
	flag.DurationVar(&o.Timeout, "timeout", o.Timeout, "how long a request may take")
	flag.DurationVar(&o.GiveUp, "give-up", o.GiveUp, "fail if no server answers one operation definitely for this long")
	flag.Parse()
	raftcheck.Run(o, func(line string) {
		fmt.Println(line)
		os.Exit(1)
	})
}
