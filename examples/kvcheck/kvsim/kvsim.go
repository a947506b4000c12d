// Package kvsim is kvcheck's workload in a simulation test (package simtest): the same
// check, unchanged, against a node's put and get handlers.
//
// kvcheck speaks its line protocol to a bridge in the workload's own process, which
// turns each request into a call of the node's handler: a handler's error is an ERR
// reply, and a call that got no answer (the node crashed, restarted, was partitioned
// away) closes the bridge's connection, so kvcheck sees the broken connection it would
// have seen talking to the node itself, and reads everything back after reconnecting.
// (kvcheck itself does not import simtest: simtest's imports allocate at init, which
// draws from the random stream a guest's math/rand shares, and every line-protocol
// example's seeds would move.)
package kvsim

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
	"github.com/seedfall/seedfall/simtest"
)

// bridgePort is the port of the bridge, on the workload's own host, under the simulator.
const bridgePort = 7001

// Check runs kvcheck's default workload (kvcheck.Main's, with its default flags)
// against node, through the node's handlers
//
//	put(key, value string) error
//	get(key string) (value string, found bool, err error)
//
// and fails t with the line kvcheck.Main would print.
func Check(t *simtest.T, node string) { CheckWith(t, node, kvcheck.DefaultWorkload(40)) }

// CheckWith is Check with workload w. Natively (go test) nothing crashes, so the settle
// before the last read-back, which gives the simulator time to crash the node again,
// is left out.
func CheckWith(t *simtest.T, node string, w kvcheck.Workload) {
	var ln net.Listener
	var err error
	if t.InSimulation() {
		ln, err = sim.Listen("tcp", fmt.Sprintf(":%d", bridgePort))
		w.Addr = fmt.Sprintf("%s:%d", sim.Node(), bridgePort)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			w.Addr = ln.Addr().String()
		}
		w.Settle = 0
		kvcheck.Failed = func(line string) { t.Fatalf("%s", line) }
		defer func() { kvcheck.Failed = nil }()
	}
	if err != nil {
		t.Fatalf("kvsim: listen: %v", err)
	}
	defer ln.Close()
	go bridge(t, node, ln)
	kvcheck.Run(w)
}

// bridge serves kvcheck's connections on ln.
func bridge(t *simtest.T, node string, ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go serve(t, node, conn)
	}
}

// serve answers one kvcheck connection, and closes it at the first call that got no
// answer from the node.
func serve(t *simtest.T, node string, conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		reply, ok := request(t, node, strings.TrimSuffix(line, "\n"))
		if !ok {
			return
		}
		if _, err := conn.Write([]byte(reply + "\n")); err != nil {
			return
		}
	}
}

// request is one line-protocol request as a call: the reply line, or false when the
// call got no answer.
func request(t *simtest.T, node, line string) (string, bool) {
	verb, rest, _ := strings.Cut(line, " ")
	var r *simtest.Reply
	switch verb {
	case "PUT":
		key, value, _ := strings.Cut(rest, " ")
		r = t.Call(node, "put", key, value)
	case "GET":
		r = t.Call(node, "get", rest)
	default:
		return "ERR unknown command", true
	}
	var value string
	var found bool
	err := r.Err()
	if err == nil && verb == "GET" {
		err = r.Scan(&value, &found)
	}
	var ce *simtest.CallError
	switch {
	case errors.As(err, &ce):
		return "", false
	case err != nil:
		return "ERR " + strings.ReplaceAll(err.Error(), "\n", " "), true
	case verb == "PUT":
		return "OK", true
	case found:
		return "VAL " + value, true
	}
	return "NONE", true
}
