// Command torn-chunk reproduces finding 3 natively, on the host, against the real
// github.com/rosedblabs/wal v1.3.8 and rosedb v2.4.0 (no seedfall): after a torn
// chunk at the end of a segment, every chunk written later is appended where no reader
// reaches it, and rosedb cannot open at all.
//
//	go run ./native/torn-chunk
//	go run github.com/seedfall/seedfall/examples/nativerun -patch patches/wal-truncate-torn-tail.patch ./native/torn-chunk
//
// The torn chunk is written by this program (a chunk header promising 100 bytes and 3
// of them), as a power loss during a write leaves it, or a writer killed inside a
// write(2) of more than a page.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rosedblabs/rosedb/v2"
	"github.com/rosedblabs/wal"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// tear appends a partial chunk (7-byte header: checksum, length 100, type full; then 3
// bytes) to the only segment with the given extension in dir.
func tear(dir, ext string) error {
	segs, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil || len(segs) == 0 {
		return fmt.Errorf("no %s segment in %s", ext, dir)
	}
	f, err := os.OpenFile(segs[len(segs)-1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte{1, 2, 3, 4, 100, 0, 1, 'a', 'b', 'c'}); err != nil {
		return err
	}
	return f.Close()
}

func run() error {
	base, err := os.MkdirTemp("", "rosedb-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)

	// The WAL alone.
	opts := wal.DefaultOptions
	opts.DirPath = filepath.Join(base, "wal")
	opts.Sync = true
	w, err := wal.Open(opts)
	if err != nil {
		return err
	}
	for i := range 5 {
		if _, err := w.Write([]byte(fmt.Sprintf("before %d", i))); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := tear(opts.DirPath, opts.SegmentFileExt); err != nil {
		return err
	}
	fmt.Println("wal: wrote 5 chunks (fsynced), closed; appended a torn chunk")
	if w, err = wal.Open(opts); err != nil {
		return err
	}
	for i := range 5 {
		if _, err := w.Write([]byte(fmt.Sprintf("after %d", i))); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	fmt.Println("wal: reopened, wrote 5 more chunks (fsynced), closed")
	if w, err = wal.Open(opts); err != nil {
		return err
	}
	r := w.NewReader()
	var before, after int
	var rerr error
	for {
		data, _, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rerr = err
			}
			break
		}
		var i int
		if _, err := fmt.Sscanf(string(data), "before %d", &i); err == nil {
			before++
		} else if _, err := fmt.Sscanf(string(data), "after %d", &i); err == nil {
			after++
		}
	}
	w.Close()
	fmt.Printf("wal: read back %d of 5 chunks before the tear, %d of 5 after it (reader stopped: %v)\n", before, after, rerr)

	// rosedb on top.
	dopts := rosedb.DefaultOptions
	dopts.DirPath = filepath.Join(base, "db")
	db, err := rosedb.Open(dopts)
	if err != nil {
		return err
	}
	for i := range 5 {
		b := db.NewBatch(rosedb.BatchOptions{Sync: true})
		if err := b.Put([]byte(fmt.Sprintf("k%d", i)), []byte("v")); err != nil {
			return err
		}
		if err := b.Commit(); err != nil {
			return err
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	if err := tear(dopts.DirPath, ".SEG"); err != nil {
		return err
	}
	fmt.Println("rosedb: committed k0..k4 (fsynced), closed; appended a torn chunk")
	db, err = rosedb.Open(dopts)
	if err != nil {
		fmt.Printf("rosedb.Open: %v: 0 of 5 acknowledged keys readable\n", err)
		return nil
	}
	defer db.Close()
	n := 0
	for i := range 5 {
		if _, err := db.Get([]byte(fmt.Sprintf("k%d", i))); err == nil {
			n++
		}
	}
	fmt.Printf("rosedb.Open: ok, %d of 5 acknowledged keys read back\n", n)
	return nil
}
