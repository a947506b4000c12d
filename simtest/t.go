package simtest

import (
	"fmt"
	"os"
	"testing"

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
