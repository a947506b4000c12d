// Command bucket-meta shows finding 7 natively, on the host, against the real
// github.com/nutsdb/nutsdb v1.0.4 (no seedfall): with SyncEnable, a transaction that
// only creates a bucket fsyncs nothing, and bucket.Meta is never fsynced at all.
// Losing the bucket needs a power loss, which a program cannot cause (after a process
// death the page cache still holds bucket.Meta), so the evidence is the system calls:
//
//	go build -o /tmp/bucket-meta ./native/bucket-meta
//	strace -f -e trace=fsync,fdatasync /tmp/bucket-meta
//
// The program prints which file each descriptor is, so the fsyncs can be attributed.
// With patches/fix-bucket-meta-fsync.patch (built with nativerun -o) phase 1 fsyncs
// bucket.Meta.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nutsdb/nutsdb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	base, err := os.MkdirTemp("", "nutsdb-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	db, err := nutsdb.Open(nutsdb.DefaultOptions, nutsdb.WithDir(filepath.Join(base, "db")), nutsdb.WithSyncEnable(true), nutsdb.WithRWMode(nutsdb.FileIO))
	if err != nil {
		return err
	}
	fmt.Println("phase 1: db.Update(NewBucket)")
	if err := db.Update(func(tx *nutsdb.Tx) error { return tx.NewBucket(nutsdb.DataStructureBTree, "b") }); err != nil {
		return err
	}
	fmt.Println("phase 2: 3 x db.Update(Put)")
	for i := range 3 {
		if err := db.Update(func(tx *nutsdb.Tx) error {
			return tx.Put("b", []byte(fmt.Sprintf("k%d", i)), []byte("v"), nutsdb.Persistent)
		}); err != nil {
			return err
		}
	}
	fmt.Println("phase 2 done; open descriptors:")
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	var lines []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, base) {
			lines = append(lines, fmt.Sprintf("  fd %s = %s", e.Name(), strings.TrimPrefix(target, base+"/")))
		}
	}
	sort.Strings(lines)
	fmt.Println(strings.Join(lines, "\n"))
	return db.Close()
}
