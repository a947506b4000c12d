// Package etcdsim is finding 32 as a simulation test with its own faults: one etcd
// v3.5.5 member (../server, a Binary node), defragmented and killed by the test itself
// right after (etcdcheck.DefragThenKill). ../v3.5.7/simtest is the same test on v3.5.7.
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

// The same test on v3.5.5 with only etcd's fix (the pre-commit hook called from
// unsafeCommit, as v3.5.6 has it) applied to the member: it passes.
func TestDefragThenKillHookFix(t *testing.T) {
	simtest.Run(t,
		simtest.Binary("n1", simtest.Program{Pkg: "../server", NetOverlay: true,
			Patches: []string{"../patches/etcd-3.5.5-precommit-hook-in-unsafecommit.patch"}}),
		simtest.MemoryLimit(1024),
		simtest.Workload(func(t *simtest.T) { etcdcheck.DefragThenKill(t, []string{"n1"}, "n1", 20) }))
}
