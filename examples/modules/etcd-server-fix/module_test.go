// Package etcdserverfix_test runs part of examples/etcd-server's own tests (a module of its
// own; modules/etcd-server runs the rest): the crash inside a defragmentation, v3.5.5
// with only the upstream fix, the shrunk plan of finding 32, and finding 32's replay
// line.
package etcdserverfix_test

import (
	"os"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) {
	exampletest.RunModule(t, "../../etcd-server", "-run", "^(TestShrunkPlan|TestUpstreamFixAlone|TestCrashInsideDefrag)")
}

// TestFindingReplays runs the replay lines docs/findings.md gives for examples/etcd-server.
func TestFindingReplays(t *testing.T) { exampletest.FindingReplays(t, "etcd-server") }

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }
