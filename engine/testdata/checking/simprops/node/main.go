// Command node is a server node that only declares properties, to show that sim's
// assertions work from any node, not only the workload.
package main

import (
	"fmt"
	"os"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	sim.Reachable("node started", map[string]any{"incarnation": sim.Incarnation()})
	ln, err := sim.Listen("tcp", ":7000")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		sim.Sometimes(true, "node accepted a connection", nil)
		c.Close()
	}
}
