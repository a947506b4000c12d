// Command torn-tail reproduces finding 8 natively, on the host, against the real
// github.com/nutsdb/nutsdb v1.0.4 (no seedfall): a data file whose last entry is torn
// makes Open fail with "crc error", so the whole database is unreachable.
//
//	go run ./native/torn-tail                   # Open fails: crc error
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-torn-tail.patch ./native/torn-tail   # 9 of 9 acknowledged keys
//
// The tear is written by this program: the last 8 bytes of the last entry (its value)
// are zeroed, as a power loss during the last commit's write leaves them when the
// sector holding them never reached the disk. That entry was never acknowledged
// (its commit was under way); the 9 before it were, each fsynced (SyncEnable).
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nutsdb/nutsdb"
)

const bucket = "b"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func open(dir string) (*nutsdb.DB, error) {
	return nutsdb.Open(nutsdb.DefaultOptions, nutsdb.WithDir(dir), nutsdb.WithSyncEnable(true), nutsdb.WithRWMode(nutsdb.FileIO))
}

func run() error {
	base, err := os.MkdirTemp("", "nutsdb-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "db")
	db, err := open(dir)
	if err != nil {
		return err
	}
	if err := db.Update(func(tx *nutsdb.Tx) error { return tx.NewBucket(nutsdb.DataStructureBTree, bucket) }); err != nil {
		return err
	}
	for i := range 10 {
		if err := db.Update(func(tx *nutsdb.Tx) error {
			return tx.Put(bucket, []byte(fmt.Sprintf("k%d", i)), []byte(fmt.Sprintf("value-%d-xxxxxxxx", i)), nutsdb.Persistent)
		}); err != nil {
			return err
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Println("committed k0..k9 (each fsynced), closed")
	dat, err := filepath.Glob(filepath.Join(dir, "*.dat"))
	if err != nil || len(dat) == 0 {
		return fmt.Errorf("no data file in %s", dir)
	}
	last := dat[len(dat)-1]
	data, err := os.ReadFile(last)
	if err != nil {
		return err
	}
	end := len(data)
	for end > 0 && data[end-1] == 0 {
		end--
	}
	f, err := os.OpenFile(last, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(make([]byte, 8), int64(end-8)); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("zeroed bytes %d..%d of %s: the tail of k9's entry, as a torn write of the last commit leaves it\n", end-8, end, filepath.Base(last))
	db, err = open(dir)
	if err != nil {
		fmt.Printf("nutsdb.Open: %v: 0 of 9 acknowledged keys readable\n", err)
		return nil
	}
	defer db.Close()
	n := 0
	for i := range 9 {
		err := db.View(func(tx *nutsdb.Tx) error {
			v, err := tx.Get(bucket, []byte(fmt.Sprintf("k%d", i)))
			if err == nil && string(v) != fmt.Sprintf("value-%d-xxxxxxxx", i) {
				return errors.New("wrong value")
			}
			return err
		})
		if err == nil {
			n++
		}
	}
	fmt.Printf("nutsdb.Open: ok, %d of 9 acknowledged keys read back\n", n)
	return nil
}
