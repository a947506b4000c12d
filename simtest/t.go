package simtest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/sim"
)

// T is the workload's view of the test: calls to the nodes, and its checks. Under go test
// its checks are t's; under the simulator the first failure is the failing run's
// reason, the line seedfall prints and groups seeds by.
type T struct {
	caller
	native *testing.T // nil under the simulator
	failed bool
	first  string
	// firstLast: the first failure is the last line printed (runWorkload need not
	// print it again).
	firstLast bool
	// binaries are the Binary nodes: Restart cannot know which port they serve on.
	binaries []string
}

// InSimulation reports whether the test runs under seedfall (false under go test).
func (t *T) InSimulation() bool { return t.native == nil && sim.InSimulation() }

// Logf prints a line: to the trace under the simulator, to the test's log natively.
func (t *T) Logf(format string, args ...any) {
	if t.native != nil {
		t.native.Helper()
		t.native.Logf(format, args...)
		return
	}
	fmt.Printf(format+"\n", args...)
	t.firstLast = false
}

// Errorf records a failure and goes on.
func (t *T) Errorf(format string, args ...any) {
	if t.native != nil {
		t.native.Helper()
		t.native.Errorf(format, args...)
		return
	}
	t.fail(fmt.Sprintf(format, args...))
}

// Fatalf records a failure and ends the workload.
func (t *T) Fatalf(format string, args ...any) {
	if t.native != nil {
		t.native.Helper()
		t.native.Fatalf(format, args...)
		return
	}
	t.fail(fmt.Sprintf(format, args...))
	panic(errFatal)
}

// Fatal is Fatalf with Sprint's formatting.
func (t *T) Fatal(args ...any) {
	if t.native != nil {
		t.native.Helper()
		t.native.Fatal(args...)
		return
	}
	t.Fatalf("%s", fmt.Sprint(args...))
}

// Failed reports whether a check failed.
func (t *T) Failed() bool {
	if t.native != nil {
		return t.native.Failed()
	}
	return t.failed
}

func (t *T) fail(msg string) {
	fmt.Fprintln(os.Stdout, msg)
	t.firstLast = !t.failed
	if !t.failed {
		t.failed, t.first = true, msg
	}
}

// Directed faults: the workload crashes, kills, restarts, partitions, heals and pauses
// nodes at the moments it chooses, in virtual time under the simulator (sim.Crash and
// the rest). Each takes effect before the call returns, appears in the trace and in the
// run's faults like a random fault, and mixes with the random faults of Faults: replay,
// shrink and -check run the workload again, which asks again at the same moment, and
// shrink never drops them. A node crashed or killed here stays down until Restart,
// whatever restart a random fault scheduled. A request that names no node, or the
// workload, fails the test.
//
// Under go test they do what a single process can: Crash and Kill stop the node (its
// listeners and connections close and its Cleanup functions run, so register one that
// closes the store; goroutines it started run on, and nothing unsynced is lost: there
// is no power to cut), Restart runs its function again on the same directory,
// Partition makes calls between the two fail at once until Heal, and Pause holds the
// node's requests.

// Crash powers node off now: what its disk had not made durable is lost. It stays down
// until Restart. Calls to it fail meanwhile.
func (t *T) Crash(node string) { t.helper(); t.directed("Crash", "crash", node, "", 0) }

// CrashDuringNextDiskOp powers node off during its next disk op (a write, an fsync, a
// rename), as a random mid-op crash does: what of the op lands, and whether a write
// tears, is drawn from the seed. It stays down until Restart; a node that does no disk
// op does not crash. Natively it stops the node at once, as Crash does.
func (t *T) CrashDuringNextDiskOp(node string) {
	t.helper()
	t.directed("CrashDuringNextDiskOp", "crash-mid-op", node, "", 0)
}

// Kill kills node's process now: the machine's page cache survives, its connections
// are closed. It stays down until Restart.
func (t *T) Kill(node string) { t.helper(); t.directed("Kill", "kill", node, "", 0) }

// Restart starts node again if it is down, and returns once it accepts connections
// (its function, where recovery runs, may still be running: calls wait for it), or
// after 10s of (virtual) time if it never does; a Binary node's port is its own, so
// Restart returns once it is started. A node that is up is left alone.
func (t *T) Restart(node string) {
	t.helper()
	t.directed("Restart", "restart", node, "", 0)
	if t.native != nil || slices.Contains(t.binaries, node) {
		return
	}
	t.drop(node)
	for deadline := time.Now().Add(restartWait); time.Now().Before(deadline); {
		if t.Connect(node) == nil {
			return
		}
		time.Sleep(restartPoll)
	}
}

// How long Restart waits for the node to accept connections, and how often it tries.
const (
	restartWait = 10 * time.Second
	restartPoll = time.Millisecond
)

// Partition cuts the links between a and b (node names, or "workload"), both ways,
// until Heal(a, b). Calls across it time out under the simulator (natively they fail
// at once).
func (t *T) Partition(a, b string) { t.helper(); t.directed("Partition", "partition", a, b, 0) }

// Heal heals the partition Partition made between a and b.
func (t *T) Heal(a, b string) { t.helper(); t.directed("Heal", "heal", a, b, 0) }

// Pause stops scheduling node for d (a GC stall, SIGSTOP): its timers and its peers go
// on without it. It returns at once. Natively the node's requests wait out d.
func (t *T) Pause(node string, d time.Duration) {
	t.helper()
	t.directed("Pause", "pause", node, "", d)
}

// Sleep waits d: virtual time under the simulator (a minute costs nothing), real time
// natively.
func (t *T) Sleep(d time.Duration) { time.Sleep(d) }

func (t *T) directed(name, kind, node, peer string, d time.Duration) {
	args := fmt.Sprintf("%q", node)
	if peer != "" {
		args += fmt.Sprintf(", %q", peer)
	}
	if d != 0 {
		args += ", " + d.String()
	}
	if t.native != nil {
		t.native.Helper()
		if err := t.net.directed(t.native, kind, node, peer, d); err != nil {
			t.native.Fatalf("simtest: %s(%s): %v", name, args, err)
		}
		return
	}
	var err error
	switch kind {
	case "crash":
		err = sim.Crash(node)
	case "crash-mid-op":
		err = sim.CrashDuringNextDiskOp(node)
	case "kill":
		err = sim.Kill(node)
	case "restart":
		err = sim.Restart(node)
	case "partition":
		err = sim.Partition(node, peer)
	case "heal":
		err = sim.Heal(node, peer)
	case "pause":
		err = sim.Pause(node, d)
	}
	if err != nil {
		t.Fatalf("simtest: %s(%s): %s", name, args, strings.TrimPrefix(err.Error(), "sim: "))
	}
}

// helper marks the caller as a helper natively (a no-op under the simulator).
func (t *T) helper() {
	if t.native != nil {
		t.native.Helper()
	}
}
