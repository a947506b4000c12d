// Command replay-head shows finding 40 natively, on the host, against the real
// github.com/dgraph-io/badger v1.6.2 (no seedfall, no power loss: three processes that
// each exit without Close, as a kill does, and keep everything they wrote).
//
//  1. write: 150 single-key transactions with SyncWrites, memtables of 1 MiB (none
//     fills, nothing is flushed: the value log holds all of them past the head).
//  2. reopen: memtables of 8 KiB, so the replay of those 150 entries fills one; the
//     flush it starts is waited for (a table in the manifest), then the process exits.
//  3. check: every key read back.
//
// The replay sets the head to each entry's value pointer before it puts the entry in
// the memtable (db.go:143); a transaction's entries are put only at its commit record
// (db.go:153-163), through ensureRoomForWrite, whose flush records the head (db.go:825):
// already the commit record of the transaction that is not in the flushed memtable.
// The next replay starts after it (value.go:889-890): that transaction is lost.
//
// Changing MaxTableSize between the processes only puts the replay's flush at a known
// place; the simulated runs keep one size throughout and lose writes the same way.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/dgraph-io/badger"
)

const keys = 150

func main() {
	if len(os.Args) == 3 {
		if err := phase(os.Args[1], os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0) // without Close
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "badger-v1-replay-head-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, p := range []string{"write", "reopen", "check"} {
		out, err := exec.Command(self, p, dir).CombinedOutput()
		fmt.Print(string(out))
		if err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
	}
	return nil
}

func open(dir string, table int64) (*badger.DB, error) {
	o := badger.DefaultOptions(dir)
	o.SyncWrites, o.Truncate, o.Logger = true, true, nil
	o.ValueLogFileSize, o.MaxTableSize = 1<<20, table
	return badger.Open(o)
}

func key(i int) string { return fmt.Sprintf("k%03d", i) }

func phase(name, dir string) error {
	switch name {
	case "write":
		db, err := open(dir, 1<<20)
		if err != nil {
			return err
		}
		for i := 0; i < keys; i++ {
			v := fmt.Sprintf("v%d-%040d", i, i)
			if err := db.Update(func(t *badger.Txn) error { return t.Set([]byte(key(i)), []byte(v)) }); err != nil {
				return err
			}
		}
		fmt.Printf("write: %d transactions committed with SyncWrites, tables flushed: %d\n", keys, len(db.Tables(false)))
	case "reopen":
		db, err := open(dir, 8<<10)
		if err != nil {
			return err
		}
		for i := 0; len(db.Tables(false)) == 0; i++ {
			if i == 500 {
				return fmt.Errorf("reopen: no table flushed in 5 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Printf("reopen: the replay's flush is in the manifest, tables: %d\n", len(db.Tables(false)))
	case "check":
		db, err := open(dir, 1<<20)
		if err != nil {
			return err
		}
		lost := 0
		for i := 0; i < keys; i++ {
			err := db.View(func(t *badger.Txn) error { _, err := t.Get([]byte(key(i))); return err })
			if err != nil {
				fmt.Printf("check: %s: %v\n", key(i), err)
				lost++
			}
		}
		fmt.Printf("check: acknowledged writes lost: %d of %d\n", lost, keys)
		db.Close()
	}
	return nil
}
