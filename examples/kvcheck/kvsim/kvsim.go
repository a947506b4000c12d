// Package kvsim is kvcheck's workload in a simulation test (package simtest): the same
// check, unchanged, against a node's put and get handlers.
//
// kvcheck speaks its line protocol over a connection that is a bridge in the
// workload's own process (no socket, no goroutine): each request line written to it is
// a call of the node's handler, and its reply line is read back. A handler's error is an
// ERR reply, and a call that got no answer (the node crashed, restarted, was
// partitioned away) breaks the connection, so kvcheck sees what it would have seen
// talking to the node itself, and reads everything back after reconnecting. Only the
// calls cross the simulated network, as a line-protocol client's requests do.
// (kvcheck itself does not import simtest: simtest's imports allocate at init, which
// draws from the random stream a guest's math/rand shares, and every line-protocol
// example's seeds would move.)
package kvsim

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/simtest"
)

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
	if !t.InSimulation() {
		w.Settle = 0
		kvcheck.Failed = func(line string) { t.Fatalf("%s", line) }
		defer func() { kvcheck.Failed = nil }()
	}
	w.Addr = "bridge"
	w.Dial = func() (net.Conn, error) { return &bridge{t: t, node: node}, nil }
	kvcheck.Run(w)
}

// bridge is one kvcheck connection: Write makes a call of each whole request line,
// Read returns the replies. After a call that got no answer the connection is broken:
// Read says io.EOF, as a socket the node's side closed.
type bridge struct {
	t       *simtest.T
	node    string
	partial []byte // a request line not ended yet
	replies bytes.Buffer
	broken  bool
	closed  bool
}

func (b *bridge) Write(p []byte) (int, error) {
	if b.closed {
		return 0, net.ErrClosed
	}
	if b.broken {
		return 0, syscall.EPIPE
	}
	b.partial = append(b.partial, p...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(b.partial[:i])
		b.partial = b.partial[i+1:]
		reply, ok := request(b.t, b.node, line)
		if !ok {
			b.broken = true
			return len(p), nil
		}
		b.replies.WriteString(reply + "\n")
	}
}

func (b *bridge) Read(p []byte) (int, error) {
	if b.closed {
		return 0, net.ErrClosed
	}
	if b.replies.Len() > 0 {
		return b.replies.Read(p)
	}
	if b.broken {
		return 0, io.EOF
	}
	// kvcheck reads only after a request, whose reply (or break) is there already.
	return 0, errors.New("kvsim: read with no request pending")
}

func (b *bridge) Close() error                     { b.closed = true; return nil }
func (b *bridge) LocalAddr() net.Addr              { return bridgeAddr{} }
func (b *bridge) RemoteAddr() net.Addr             { return bridgeAddr{} }
func (b *bridge) SetDeadline(time.Time) error      { return nil } // each call has its own
func (b *bridge) SetReadDeadline(time.Time) error  { return nil }
func (b *bridge) SetWriteDeadline(time.Time) error { return nil }

type bridgeAddr struct{}

func (bridgeAddr) Network() string { return "kvsim" }
func (bridgeAddr) String() string  { return "bridge" }

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
