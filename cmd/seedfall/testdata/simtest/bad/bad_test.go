// Package bad holds simulation tests that are wrong on purpose: seedfall test must refuse
// each with a clear error and exit 2 (TestSimtestBadInput).
package bad

import (
	"testing"

	"github.com/seedfall/seedfall/simtest"
)

func serve(n *simtest.N) { n.Handle("ping", func() string { return "pong" }) }

func ping(t *simtest.T) {
	var s string
	if err := t.Call("a", "ping").Scan(&s); err != nil || s != "pong" {
		t.Fatalf("ping: %q, %v", s, err)
	}
}

func TestNoWorkload(t *testing.T) {
	simtest.Run(t, simtest.Node("a", serve))
}

func TestDuplicateNodes(t *testing.T) {
	simtest.Run(t, simtest.Node("a", serve), simtest.Node("a", serve), simtest.Workload(ping))
}

func TestPanicsAtStart(t *testing.T) {
	simtest.Run(t, simtest.Node("a", func(*simtest.N) { panic("the node cannot start") }), simtest.Workload(ping))
}

// TestPings is a correct test: the package is not refused as a whole.
func TestPings(t *testing.T) {
	simtest.Run(t, simtest.Faults{CrashPerSec: 0.5}, simtest.Node("a", serve), simtest.Workload(ping))
}

func TestInSubtest(t *testing.T) {
	t.Run("sub", func(t *testing.T) { simtest.Run(t, simtest.Node("a", serve), simtest.Workload(ping)) })
}

// TestUnknownNode asks for a crash of a node it does not declare.
func TestUnknownNode(t *testing.T) {
	simtest.Run(t, simtest.Node("a", serve), simtest.Workload(func(t *simtest.T) { t.Crash("nope") }))
}
