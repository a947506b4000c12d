// Package pogrebsim is examples/pogreb as a simulation test (seedfall test ./simtest).
package pogrebsim

import (
	"testing"

	"github.com/akrylysov/pogreb"
	"github.com/akrylysov/pogreb/fs"
	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
)

// Finding 10: recovery truncates a torn tail and loses every write after it.
func TestAcknowledgedWritesSurvive(t *testing.T) { run(t) }

func TestAcknowledgedWritesSurviveFixed(t *testing.T) {
	run(t, simtest.Patches("../patches/fix-recovery-truncate.patch"))
}

func run(t *testing.T, opts ...simtest.Option) {
	simtest.Run(t, append(opts, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", func(n *simtest.N) {
			db, err := pogreb.Open(n.Dir("pogreb"), &pogreb.Options{BackgroundSyncInterval: -1, FileSystem: fs.OS})
			if err != nil {
				n.Fatalf("open pogreb: %v", err)
			}
			n.Handle("put", func(k, v string) error { return db.Put([]byte(k), []byte(v)) })
			n.Handle("get", func(k string) (string, bool, error) { v, err := db.Get([]byte(k)); return string(v), v != nil, err })
		}),
		simtest.Workload(func(t *simtest.T) { kvsim.Check(t, "db") }))...)
}
