// Reach corpus entry (examples/reach): github.com/syndtr/goleveldb@v1.0.0 as a user has it, unmodified,
// imported only from this test file. A node opens it, writes with sync, is crashed with
// torn writes, reopens and reads back (kvsim's workload checks every acknowledged write).
package reach

import (
	"testing"

	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

func TestReach(t *testing.T) {
	simtest.Run(t, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", func(n *simtest.N) {
			db, err := leveldb.OpenFile(n.Dir("leveldb"), nil)
			if err != nil {
				n.Fatalf("open: %v", err)
			}
			n.Handle("put", func(k, v string) error { return db.Put([]byte(k), []byte(v), &opt.WriteOptions{Sync: true}) })
			n.Handle("get", func(k string) (string, bool, error) {
				v, err := db.Get([]byte(k), nil)
				if err == leveldb.ErrNotFound {
					return "", false, nil
				}
				return string(v), err == nil, err
			})
		}),
		simtest.Workload(func(t *simtest.T) { kvsim.Check(t, "db") }))
}
