// Package raftsim is the raft example's strict.lin.json as a simulation test: the three
// nodes are the example's node command (Binary), the workload is raftcheck's with the
// kv linearizability check.
package raftsim

import (
	"testing"
	"time"

	"github.com/seedfall/seedfall/examples/raft/raftcheck"
	"github.com/seedfall/seedfall/simtest"
)

// cluster is n1, n2 and n3 running ../node over /raft, with patches applied to raft.
func cluster(patches ...string) []simtest.Option {
	var opts []simtest.Option
	for _, name := range []string{"n1", "n2", "n3"} {
		opts = append(opts, simtest.Binary(name, simtest.Program{
			Pkg: "../node", Args: []string{"-peers", "n1,n2,n3", "-data", "/raft"},
			NetOverlay: true, Patches: patches,
		}))
	}
	return opts
}

// world is strict.lin.json's: crashes, torn writes, partitions, strict directories.
func world() []simtest.Option {
	return []simtest.Option{
		simtest.Faults{
			CrashPerSec: 0.5, CrashMidOp: &simtest.DiskFault{P: 0.5}, TornWrites: true,
			PartitionPerSec: 0.5, PartitionDuration: time.Second, OneWayShare: 0.25,
		},
		simtest.StrictDirs(), simtest.Linearizable("kv"), simtest.Horizon(120 * time.Second),
		simtest.Workload(func(t *simtest.T) {
			raftcheck.Run(raftcheck.Defaults, func(line string) { t.Fatalf("%s", line) })
		}),
	}
}

// TestLinearizable finds the raft finding: a snapshot's directory is never fsynced, so
// under strict_dirs a crash loses the snapshot a node already reported.
func TestLinearizable(t *testing.T) {
	simtest.Run(t, append(cluster(), world()...)...)
}

// TestLinearizablePatched is the same test with raft patched.
func TestLinearizablePatched(t *testing.T) {
	simtest.Run(t, append(cluster("../patches/snapshot-dir-fsync.patch"), world()...)...)
}
