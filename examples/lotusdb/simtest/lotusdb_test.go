// Package lotusdbsim runs lotusdb v2.1.0 as a simulation test (seedfall test ./simtest):
// a DB opened with Options.Sync true, whose every acknowledged Put must survive
// crashes and torn writes.
package lotusdbsim

import (
	"errors"
	"os"
	"testing"

	"github.com/lotusdblabs/lotusdb/v2"
	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
)

// lotusdb v2.1.0 as released: an acknowledged Put lost (Options.Sync never fsyncs the
// memtable WAL), Open panicking "invalid freelist page" (the index is opened NoSync and
// the commit every Open makes is never synced), Open failing "invalid crc" (a torn WAL
// tail, rosedblabs/wal v1.3.6: finding 3).
func TestAcknowledgedWritesSurvive(t *testing.T) { run(t) }

// The same test with the three fixes.
func TestAcknowledgedWritesSurviveFixed(t *testing.T) {
	run(t, simtest.Patches(
		"../patches/lotusdb-fix-options-sync.patch",
		"../patches/lotusdb-fix-index-nosync.patch",
		"../patches/wal-v1.3.6-truncate-torn-tail.patch"))
}

func run(t *testing.T, opts ...simtest.Option) {
	simtest.Run(t, append(opts, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", func(n *simtest.N) {
			o := lotusdb.DefaultOptions
			o.DirPath = n.Dir("lotus")
			o.Sync = true // "Sync being true means write followed by fsync" (options.go)
			db, err := lotusdb.Open(o)
			if err != nil {
				n.Fatalf("open: %v", err) // recovery runs here, after every crash
			}
			n.Cleanup(func() { // natively only
				db.Close()
				os.Remove(lotusdb.DefaultOptions.DirPath) // the empty directory lotusdb's package init makes
			})
			n.Handle("put", func(k, v string) error { return db.Put([]byte(k), []byte(v)) })
			n.Handle("get", func(k string) (string, bool, error) {
				v, err := db.Get([]byte(k))
				if errors.Is(err, lotusdb.ErrKeyNotFound) {
					return "", false, nil
				}
				return string(v), v != nil, err
			})
		}),
		simtest.Workload(func(t *simtest.T) { kvsim.Check(t, "db") }))...)
}
