// Package badgerv1sim runs badger v1.6.2 (github.com/dgraph-io/badger, the v1 module
// path) as a simulation test (seedfall test ./simtest): a DB opened with SyncWrites,
// whose every acknowledged write must survive crashes and torn writes.
package badgerv1sim

import (
	"testing"

	"github.com/dgraph-io/badger"
	"github.com/seedfall/seedfall/examples/kvcheck/kvsim"
	"github.com/seedfall/seedfall/simtest"
)

// badger v1.6.2 as released: a write acknowledged before a crash is lost after the
// next one, when the value-log replay of the first restart filled a memtable (the
// replay records a head past a transaction it has not yet put in the memtable).
func TestAcknowledgedWritesSurvive(t *testing.T) { run(t) }

// The same test with the replay's head moved after the entries it covers.
func TestAcknowledgedWritesSurviveFixed(t *testing.T) {
	run(t, simtest.Patches("../patches/badger-v1.6.2-replay-head.patch"))
}

func run(t *testing.T, opts ...simtest.Option) {
	simtest.Run(t, append(opts, simtest.Faults{CrashPerSec: 1, TornWrites: true},
		simtest.Node("db", node),
		simtest.Workload(func(t *simtest.T) { kvsim.Check(t, "db") }))...)
}

// node serves badger with SyncWrites: put and get.
func node(n *simtest.N) {
	o := badger.DefaultOptions(n.Dir("badger"))
	o.SyncWrites = true
	// A torn last value-log entry is cut off at Open; the default (false) refuses
	// to open ("Value log truncate required"), which badger's maintainers answer
	// with this option (badger#744).
	o.Truncate = true
	o.Logger = nil
	// A scale model of badger's 64 MiB memtables and 1 GiB value-log files: the
	// workload writes about 20 KiB, so with 8 KiB memtables a restart's replay fills
	// one, as a replay of several unflushed 64 MiB memtables does in production.
	o.MaxTableSize = 8 << 10
	o.ValueLogFileSize = 1 << 20
	db, err := badger.Open(o)
	if err != nil {
		n.Fatalf("open: %v", err) // recovery runs here, after every crash
	}
	n.Cleanup(func() { db.Close() }) // natively only
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
}
