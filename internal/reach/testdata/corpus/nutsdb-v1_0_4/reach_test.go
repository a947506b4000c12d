// Reach corpus entry (examples/reach): github.com/nutsdb/nutsdb@v1.0.4 as a user has it, unmodified,
// imported only from this test file. A node opens it, writes with sync, is crashed with
// torn writes, reopens and reads back (kvsim's workload checks every acknowledged write).
package reach

import (
	"testing"

	"github.com/nutsdb/nutsdb"
	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
)

func TestReach(t *testing.T) {
	simtest.Run(t, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", func(n *simtest.N) {
			db, err := nutsdb.Open(nutsdb.DefaultOptions, nutsdb.WithDir(n.Dir("nutsdb")), nutsdb.WithSyncEnable(true))
			if err != nil {
				n.Fatalf("open: %v", err)
			}
			if err := db.Update(func(tx *nutsdb.Tx) error {
				if err := tx.NewBucket(nutsdb.DataStructureBTree, "kv"); err != nil && err != nutsdb.ErrBucketAlreadyExist {
					return err
				}
				return nil
			}); err != nil {
				n.Fatalf("bucket: %v", err)
			}
			n.Handle("put", func(k, v string) error {
				return db.Update(func(tx *nutsdb.Tx) error { return tx.Put("kv", []byte(k), []byte(v), 0) })
			})
			n.Handle("get", func(k string) (string, bool, error) {
				var out []byte
				err := db.View(func(tx *nutsdb.Tx) error {
					v, err := tx.Get("kv", []byte(k))
					if err != nil {
						return nil
					}
					out = append([]byte{}, v...)
					return nil
				})
				return string(out), out != nil, err
			})
		}),
		simtest.Workload(func(t *simtest.T) { kvsim.Check(t, "db") }))
}
