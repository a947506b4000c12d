// Command options-sync shows finding 18 natively, on the host, against the real
// github.com/rosedblabs/rosedb/v2 v2.4.0 (no seedfall): a DB opened with Options.Sync
// true ("Sync being true means write followed by fsync") never fsyncs a Put. Losing
// the writes needs a power loss, which a program cannot cause, so the evidence is the
// system calls: run it under strace and count the fsyncs of each phase.
//
//	go build -o /tmp/options-sync ./native/options-sync
//	strace -f -e trace=fsync,fdatasync /tmp/options-sync
//
// Phase 1 opens with Options.Sync true and calls DB.Put 10 times: no fsync. Phase 2
// opens with Options.Sync false and commits 10 batches with BatchOptions.Sync true:
// one fsync each. With patches/fix-options-sync.patch phase 1 fsyncs 10 times too.
package main

import (
	"fmt"
	"os"

	"github.com/rosedblabs/rosedb/v2"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	base, err := os.MkdirTemp("", "rosedb-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)

	opts := rosedb.DefaultOptions
	opts.DirPath = base + "/dbsync"
	opts.Sync = true
	db, err := rosedb.Open(opts)
	if err != nil {
		return err
	}
	fmt.Println("phase 1: Options.Sync true, 10 x DB.Put")
	for i := range 10 {
		if err := db.Put([]byte(fmt.Sprintf("k%d", i)), []byte("v")); err != nil {
			return err
		}
	}
	fmt.Println("phase 1 done")
	if err := db.Close(); err != nil {
		return err
	}

	opts.DirPath = base + "/batchsync"
	opts.Sync = false
	db, err = rosedb.Open(opts)
	if err != nil {
		return err
	}
	fmt.Println("phase 2: Options.Sync false, 10 x Batch.Commit with BatchOptions.Sync true")
	for i := range 10 {
		b := db.NewBatch(rosedb.BatchOptions{Sync: true})
		if err := b.Put([]byte(fmt.Sprintf("k%d", i)), []byte("v")); err != nil {
			return err
		}
		if err := b.Commit(); err != nil {
			return err
		}
	}
	fmt.Println("phase 2 done")
	return db.Close()
}
