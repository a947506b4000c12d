// Package etcdserver_test runs examples/etcd-server's own tests (a module of its own):
// the three-member divergence on v3.5.5. Its other tests run beside it, in
// modules/etcd-server-bbolt (v3.5.7's three members, bbolt's torn first write),
// modules/etcd-server-fix (the crash inside a defragmentation, the upstream fix, the
// shrunk plan, finding 32's replay) and modules/etcd-server-directed (the directed-fault
// test): each builds etcd for wasip1 several times, too much for one package's budget
// from a cold cache (BENCHMARKS.md, "Issue 61, fifth pass").
package etcdserver_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) {
	exampletest.RunModule(t, "../../etcd-server", "-skip", "^(TestDirected|TestShrunkPlan|TestUpstreamFixAlone|TestBboltTornInit|TestCrashInsideDefrag|TestThreeMembersFixed)")
}
