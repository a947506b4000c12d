// Reach corpus entry (examples/reach): github.com/cockroachdb/pebble/v2@v2.1.7 as a user has it, unmodified,
// imported only from this test file. A node opens it, writes with sync, is crashed with
// torn writes, reopens and reads back (kvsim's workload checks every acknowledged write).
package reach

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
)

func TestReach(t *testing.T) {
	simtest.Run(t, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", func(n *simtest.N) {
			db, err := pebble.Open(n.Dir("pebble"), &pebble.Options{})
			if err != nil {
				n.Fatalf("open: %v", err)
			}
			n.Handle("put", func(k, v string) error { return db.Set([]byte(k), []byte(v), pebble.Sync) })
			n.Handle("get", func(k string) (string, bool, error) {
				v, closer, err := db.Get([]byte(k))
				if err == pebble.ErrNotFound {
					return "", false, nil
				}
				if err != nil {
					return "", false, err
				}
				defer closer.Close()
				return string(v), true, nil
			})
		}),
		simtest.Workload(func(t *simtest.T) { kvsim.Check(t, "db") }))
}
