// Package etcdsim is finding 32's test (../../simtest) on etcd v3.5.7, which has the fix:
// one member (../server, v3.5.7), defragmented and killed by the test itself right
// after. It passes.
package etcdsim

import (
	"testing"

	"github.com/seedfall/seedfall/examples/etcd-server/etcdcheck"
	"github.com/seedfall/seedfall/simtest"
)

func TestDefragThenKill(t *testing.T) {
	simtest.Run(t,
		simtest.Binary("n1", simtest.Program{Pkg: "../server", NetOverlay: true}),
		simtest.MemoryLimit(1024), // a defragmentation maps the old and the new bbolt file
		simtest.Workload(func(t *simtest.T) { etcdcheck.DefragThenKill(t, []string{"n1"}, "n1", 20) }))
}
