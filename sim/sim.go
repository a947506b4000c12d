package sim

import (
	"encoding/json"
	"errors"
	"fmt"
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

// Directed faults: a workload (or any program of the run) crashes, kills, restarts,
// partitions, heals or pauses a node at a moment of its choosing, in virtual time, the
// way gosim's and turmoil's tests do. Each takes effect before the call returns, is
// traced and recorded in the run's faults like a random fault (marked "directed"), and
// replays exactly: replay, shrink and -check run the same program, which asks again at
// the same moment (shrink never drops them). A node the workload crashed or killed
// stays down until it restarts it, whatever restart a random fault scheduled; a
// partition made with Partition lasts until Heal. The error says why a request was
// refused (an unknown node, the workload as the target, a heal of a partition that is
// not in effect). Outside the simulator each returns ErrNotSimulated.

// ErrNotSimulated is what the directed faults return outside the simulator: natively
// there is no machine to power off (package simtest does what it can there).
var ErrNotSimulated = errors.New("sim: directed faults need the simulator")

// Crash powers node off now: what its disk had not made durable is lost, as in a
// random crash. It stays down until Restart.
func Crash(node string) error { return fault(faultReq{Kind: "crash", Node: node}) }

// CrashDuringNextDiskOp powers node off during its next disk operation (a write, an
// fsync, a rename: what of it lands is drawn as in a random mid-op crash, with torn
// writes when the config has them). It stays down until Restart. If the node does no
// disk op before a restart, the crash does not happen.
func CrashDuringNextDiskOp(node string) error {
	return fault(faultReq{Kind: "crash", Node: node, MidOp: true})
}

// Kill kills node's process now (SIGKILL, the OOM killer): the page cache survives and
// the kernel closes its sockets. It stays down until Restart.
func Kill(node string) error { return fault(faultReq{Kind: "kill", Node: node}) }

// Restart starts node again if it is down (a node that is up is left alone). It
// returns once the new process is started, not once it serves: its recovery runs
// after.
func Restart(node string) error { return fault(faultReq{Kind: "restart", Node: node}) }

// Partition cuts the links between a and b, both ways, until Heal(a, b).
func Partition(a, b string) error {
	return fault(faultReq{Kind: "partition", Node: a, Peers: []string{b}})
}

// Heal heals a partition that Partition made between a and b.
func Heal(a, b string) error { return fault(faultReq{Kind: "heal", Node: a, Peers: []string{b}}) }

// Pause stops scheduling node for d of virtual time (a GC stall, SIGSTOP): its timers
// and peers go on without it.
func Pause(node string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("sim: Pause(%q, %s): a pause needs a positive duration", node, d)
	}
	return fault(faultReq{Kind: "pause", Node: node, DurationNS: int64(d)})
}

// faultReq is the seedfall.fault request (docs/ABI.md).
type faultReq struct {
	Kind       string   `json:"kind"`
	Node       string   `json:"node"`
	Peers      []string `json:"peers,omitempty"`
	DurationNS int64    `json:"duration_ns,omitempty"`
	MidOp      bool     `json:"mid_op,omitempty"`
}
