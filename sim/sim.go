package sim

import (
	"encoding/json"
	"net"
	"os"
	"strconv"
	"time"
)

// Node returns the name of the node this process runs as (SEEDFALL_NODE), such as
// "server", or "" outside the simulator.
func Node() string { return os.Getenv("SEEDFALL_NODE") }

// Incarnation returns which life of its node this process is (SEEDFALL_INCARNATION):
// 1 for the first start, 2 after the first crash and restart, and so on. It returns 0
// outside the simulator.
func Incarnation() int {
	n, err := strconv.Atoi(os.Getenv("SEEDFALL_INCARNATION"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Dial connects to the address on the named network, which must be "tcp", "tcp4" or
// "tcp6". The address is "node:port", such as "server:7000"; "localhost" and
// "127.0.0.1" name the calling node itself.
//
// Inside the simulator, Dial returns once the connection is established, or with an
// error that wraps a [syscall.Errno] such as [syscall.ECONNREFUSED] (nothing listens)
// or [syscall.EHOSTUNREACH] (no such node), so errors.Is works on it.
//
// Outside the simulator, Dial is [net.Dial], except that a node name is first looked up
// in the environment: with SEEDFALL_ADDR_server=127.0.0.1:7000 set, "server:7000"
// dials 127.0.0.1:7000. Without such a variable the address is used as is.
func Dial(network, address string) (net.Conn, error) {
	return dial(network, address, 0)
}

// DialTimeout is like [Dial] but gives up after timeout; the error then reports
// Timeout() true. A timeout of zero or less means no timeout.
func DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	return dial(network, address, timeout)
}

// Listen announces on the local network address, such as ":7000". The network must be
// "tcp", "tcp4" or "tcp6". Inside the simulator only the port matters (port 0 picks a
// free one) and errors wrap a [syscall.Errno] such as [syscall.EADDRINUSE]. Outside the
// simulator, Listen is [net.Listen].
func Listen(network, address string) (net.Listener, error) {
	return listen(network, address)
}

// Always asserts that cond is true every time this line runs. A false Always fails the
// run. details, if not nil, is recorded with the hit (JSON-encoded; keep it small).
func Always(cond bool, message string, details map[string]any) {
	assert(kindAlways, cond, message, details)
}

// Sometimes asserts that cond is true at least once across the sweep. It never fails a
// run by itself: the sweep reports for how many seeds it was reached and how many made
// it true, so you know the interesting case really happened.
func Sometimes(cond bool, message string, details map[string]any) {
	assert(kindSometimes, cond, message, details)
}

// Reachable asserts that this line runs in at least one seed of the sweep.
func Reachable(message string, details map[string]any) {
	assert(kindReachable, true, message, details)
}

// Unreachable asserts that this line never runs. Reaching it fails the run.
func Unreachable(message string, details map[string]any) {
	assert(kindUnreachable, true, message, details)
}

// SetupComplete tells the simulator that the system is set up (a cluster formed, a
// schema loaded), like the Antithesis SDK's lifecycle.SetupComplete. With the config's
// "faults": {"start_on": "setup_complete"}, generated faults start only then (plus
// start_after). Only the first call counts. details, if not nil, goes into the trace.
// Outside the simulator it does nothing.
func SetupComplete(details map[string]any) {
	setupComplete(encodeDetails(details))
}

// StopFaults asks for a quiet period: no new fault starts for d of virtual time
// (d <= 0: for the rest of the run); faults already in effect run their course. Call it
// before checking eventual properties (the cluster converges once the faults stop), as
// Antithesis' ANTITHESIS_STOP_FAULTS. Faults it drops do not count for the config's
// liveness.quiet. Outside the simulator it does nothing.
func StopFaults(d time.Duration) {
	stopFaults(d)
}

// Assertion kinds, as numbered by the host's assert call.
const (
	kindAlways      = 0
	kindSometimes   = 1
	kindReachable   = 2
	kindUnreachable = 3
)

// failed reports whether a hit of this kind and condition breaks its property.
func failed(kind int, cond bool) bool {
	return (kind == kindAlways && !cond) || kind == kindUnreachable
}

// FailureContext says that the failure line the program is about to print (its last
// line: a failing workload's reason) ends in text, which tells where or how the failure
// was noticed rather than what failed: "(read back after reconnecting, before the next
// write)". The line is printed and reported whole; its signature leaves text out, so
// one bug that two checks notice is one signature, not two. Outside the simulator it
// does nothing.
func FailureContext(text string) { failureContext(text) }

// Op is one operation of a recorded history, started by [Call] and finished by
// [Op.Return]. The zero value and nil are valid and record nothing.
type Op struct {
	id     uint32
	active bool
}

// Call records that client starts an operation with the given input, which is
// JSON-encoded for the checker's model (for the kv model, for example, an object
// naming the operation, key and value). The host stamps the virtual time of the call.
// Call the returned Op's Return when the outcome is known; an operation never returned
// is treated as having an unknown outcome, which is the right record for a request
// whose reply was lost.
func Call(client int, input any) *Op {
	return call(client, input)
}

// Return records the operation's output, JSON-encoded, and stamps the virtual time of
// the return. Only the first Return of an Op counts.
func (o *Op) Return(output any) {
	if o == nil || !o.active {
		return
	}
	o.active = false
	opReturn(o.id, output)
}

// encode JSON-encodes v for the host. Map keys come out sorted, so equal details give
// equal bytes. A value that cannot be encoded is recorded as a JSON string that says
// why, rather than dropped.
func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal("sim: cannot encode: " + err.Error())
	}
	return b
}

// encodeDetails is encode for assertion details, where a nil or empty map is nothing.
func encodeDetails(details map[string]any) []byte {
	if len(details) == 0 {
		return nil
	}
	return encode(details)
}
