// Command torn-wal shows finding 3 (rosedblabs/wal v1.3.6) natively, on the host,
// through github.com/lotusdblabs/lotusdb/v2 v2.1.0 (no seedfall): the state a power loss
// leaves when it tears the last append to the memtable WAL (000000001.SEG.1) at a
// 512-byte sector boundary. The program writes that state itself: it makes 10 Puts
// (Options.Sync true), makes an 11th (the Put in flight), closes the DB, and cuts the
// file at the first sector boundary inside the 11th record, as seedfall's torn write
// does; then, in a second copy, it keeps the file size and zeroes the bytes after that
// boundary (the size reached the disk, the sectors did not). It then opens each.
//
// Unpatched, lotusdb.Open fails: "invalid crc, the data may be corrupted", for ever.
// With patches/wal-v1.3.6-truncate-torn-tail.patch, Open cuts the torn record off,
// the 10 acknowledged keys read back, and a Put after the recovery survives another
// Open.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lotusdblabs/lotusdb/v2"
)

func main() {
	// lotusdb's package init makes an empty directory (options.go:147): remove it.
	os.Remove(lotusdb.DefaultOptions.DirPath)
	for _, zero := range []bool{false, true} {
		if err := run(zero); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func options(dir string) lotusdb.Options {
	opts := lotusdb.DefaultOptions
	opts.DirPath = dir
	opts.Sync = true
	return opts
}

func run(zero bool) error {
	dir, err := os.MkdirTemp("", "lotusdb-torn-wal-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	seg := filepath.Join(dir, "000000001.SEG.1")

	db, err := lotusdb.Open(options(dir))
	if err != nil {
		return err
	}
	for i := 0; i < 10; i++ {
		if err := db.Put([]byte(fmt.Sprintf("k%d", i)), []byte(fmt.Sprintf("value-%d-%060d", i, i))); err != nil {
			return err
		}
	}
	st, err := os.Stat(seg)
	if err != nil {
		return err
	}
	before := st.Size()
	if err := db.Put([]byte("k10"), []byte(fmt.Sprintf("value-10-%0600d", 10))); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	if st, err = os.Stat(seg); err != nil {
		return err
	}
	after := st.Size()
	cut := (before/512 + 1) * 512 // the first sector boundary inside the last append
	if cut >= after {
		return fmt.Errorf("no sector boundary in the last append %d..%d", before, after)
	}
	if zero {
		f, err := os.OpenFile(seg, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		if _, err := f.WriteAt(make([]byte, after-cut), cut); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Printf("zeroed: 10 acknowledged Puts end at byte %d; the 11th append (%d..%d) kept up to the sector boundary %d, zeros after it (size %d kept)\n", before, before, after, cut, after)
	} else {
		if err := os.Truncate(seg, cut); err != nil {
			return err
		}
		fmt.Printf("cut: 10 acknowledged Puts end at byte %d; the 11th append (%d..%d) torn at the sector boundary %d\n", before, before, after, cut)
	}

	if db, err = lotusdb.Open(options(dir)); err != nil {
		fmt.Printf("lotusdb.Open: %v\n", err)
		return nil
	}
	ok := 0
	for i := 0; i < 10; i++ {
		if v, err := db.Get([]byte(fmt.Sprintf("k%d", i))); err == nil && len(v) > 0 {
			ok++
		}
	}
	fmt.Printf("lotusdb.Open: ok, %d of 10 acknowledged keys read back\n", ok)
	if err := db.Put([]byte("k11"), []byte("after-recovery")); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	if db, err = lotusdb.Open(options(dir)); err != nil {
		fmt.Printf("lotusdb.Open after the recovery: %v\n", err)
		return nil
	}
	v, err := db.Get([]byte("k11"))
	fmt.Printf("a Put after the recovery, read after another Open: %q (err %v)\n", v, err)
	return db.Close()
}
