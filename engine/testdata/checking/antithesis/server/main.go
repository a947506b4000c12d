// Command server is a tiny echo-like service that uses the Antithesis Go SDK unchanged:
// assert.Always, assert.Sometimes, assert.Reachable, assert.Unreachable and
// lifecycle.SetupComplete. It answers each line "N" with "N*2". With -violate it
// breaks an assert.Always on purpose; the violation is only read when the server
// stops, at the end of the run.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/antithesishq/antithesis-sdk-go/assert"
	"github.com/antithesishq/antithesis-sdk-go/lifecycle"

	"github.com/seedfall/seedfall/sim"
)

var violate = flag.Bool("violate", false, "break an Always on the first request, on purpose")

func main() {
	flag.Parse()
	ln, err := sim.Listen("tcp", ":7000")
	if err != nil {
		fmt.Fprintf(os.Stderr, "server: %v\n", err)
		os.Exit(1)
	}
	assert.Reachable("server started", map[string]any{"incarnation": sim.Incarnation()})
	lifecycle.SetupComplete(map[string]any{"node": sim.Node()})
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintf(os.Stderr, "server: %v\n", err)
			os.Exit(1)
		}
		go serve(c)
	}
}

func serve(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		n, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			assert.Unreachable("server got a malformed request", map[string]any{"line": sc.Text()})
			return
		}
		assert.Always(n >= 0, "server sees non-negative requests", map[string]any{"n": n})
		assert.Always(!*violate, "server was not told to misbehave", map[string]any{"n": n})
		assert.Sometimes(n%7 == 0, "server saw a multiple of 7", map[string]any{"n": n})
		if _, err := fmt.Fprintf(c, "%d\n", 2*n); err != nil {
			return
		}
	}
}
