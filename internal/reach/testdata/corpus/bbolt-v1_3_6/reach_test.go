// Reach corpus entry (examples/reach): go.etcd.io/bbolt@v1.3.6 as a user has it, unmodified,
// imported only from this test file. A node opens it, writes with sync, is crashed with
// torn writes, reopens and reads back (kvsim's workload checks every acknowledged write).
package reach

import (
	"testing"

	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
	bolt "go.etcd.io/bbolt"
)

func TestReach(t *testing.T) {
	simtest.Run(t, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", func(n *simtest.N) {
			db, err := bolt.Open(n.Dir("bolt")+"/db", 0o600, nil)
			if err != nil {
				n.Fatalf("open: %v", err)
			}
			if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("kv")); return err }); err != nil {
				n.Fatalf("create bucket: %v", err)
			}
			n.Handle("put", func(k, v string) error {
				return db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("kv")).Put([]byte(k), []byte(v)) })
			})
			n.Handle("get", func(k string) (string, bool, error) {
				var out []byte
				err := db.View(func(tx *bolt.Tx) error {
					if v := tx.Bucket([]byte("kv")).Get([]byte(k)); v != nil {
						out = append([]byte{}, v...)
					}
					return nil
				})
				return string(out), out != nil, err
			})
		}),
		simtest.Workload(func(t *simtest.T) { kvsim.Check(t, "db") }))
}
