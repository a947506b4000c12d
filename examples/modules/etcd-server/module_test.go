// Package etcdserver_test runs examples/etcd-server's own tests (a module of its own):
// the three-member divergence. Its other tests run beside it, in modules/etcd-server-fix
// (the crash inside a defragmentation, the upstream fix, the shrunk plan, bbolt's torn
// first write, finding 32's replay) and modules/etcd-server-directed (the
// directed-fault test): each builds etcd for wasip1 several times, too much for one
// package's budget from a cold cache.
package etcdserver_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) {
	exampletest.RunModule(t, "../../etcd-server", "-skip", "^(TestDirected|TestShrunkPlan|TestUpstreamFixAlone|TestBboltTornInit|TestCrashInsideDefrag)")
}
