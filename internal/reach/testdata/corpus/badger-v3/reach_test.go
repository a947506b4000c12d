// Reach corpus entry (examples/reach): github.com/dgraph-io/badger/v3@v3.2103.5 as a user has it, unmodified,
// imported only from this test file. A node opens it, writes with sync, is crashed with
// torn writes, reopens and reads back (kvsim's workload checks every acknowledged write).
package reach

import (
	"testing"

	badger "github.com/dgraph-io/badger/v3"
	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
)

func TestReach(t *testing.T) {
	simtest.Run(t, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", func(n *simtest.N) {
			// The simulated disk holds files of up to 1 GiB and maps up to 256 MiB in all
			// (docs/overlay.md): badger's 2 GiB value log files and 64 MiB memtables are
			// made smaller, as on a small machine.
			db, err := badger.Open(badger.DefaultOptions(n.Dir("badger")).WithSyncWrites(true).WithLogger(nil).
				WithValueLogFileSize(16 << 20).WithMemTableSize(8 << 20))
			if err != nil {
				n.Fatalf("open: %v", err)
			}
			n.Handle("put", func(k, v string) error {
				return db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(k), []byte(v)) })
			})
			n.Handle("get", func(k string) (string, bool, error) {
				var out []byte
				err := db.View(func(txn *badger.Txn) error {
					it, err := txn.Get([]byte(k))
					if err == badger.ErrKeyNotFound {
						return nil
					}
					if err != nil {
						return err
					}
					out, err = it.ValueCopy(nil)
					return err
				})
				return string(out), out != nil, err
			})
		}),
		simtest.Workload(func(t *simtest.T) { kvsim.Check(t, "db") }))
}
