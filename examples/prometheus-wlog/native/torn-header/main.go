// Command torn-header runs finding 5 natively, on the host, against the real
// github.com/prometheus/prometheus v0.316.0 tsdb/wlog (no seedfall), in two scenarios:
//
// torn: three records are logged and the log closed; then the segment is cut one byte
// into the third record's header, as a torn 4 KiB write with the file size already
// committed past it leaves it (ext4 on a drive that writes 512-byte sectors
// atomically). The reader returns a third, empty, record nobody logged.
//
// page-end: a 32,754-byte record and two small ones are logged, the log is closed
// cleanly and replayed as the TSDB head does (Repair on a read error). The first
// record leaves exactly 7 bytes in its page, so the writer logs a zero-length
// fragment there (wlog.go:717-735). The library as released reads 3 of 3 back; the
// old patch (patches/old-fix-torn-header-rejects-empty.patch) calls that fragment torn
// and Repair deletes two records that were written and synced before a clean shutdown.
//
//	go run ./native/torn-header
//	go run github.com/seedfall/seedfall/examples/nativerun -patch patches/fix-torn-header.patch ./native/torn-header
//	go run github.com/seedfall/seedfall/examples/nativerun -patch patches/old-fix-torn-header-rejects-empty.patch ./native/torn-header
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
)

const segSize = 4 * 32 * 1024

func main() {
	for _, sc := range []struct {
		name string
		f    func(dir string) error
	}{{"torn", torn}, {"page-end", pageEnd}} {
		dir, err := os.MkdirTemp("", "wlog-native-")
		if err == nil {
			fmt.Printf("== %s\n", sc.name)
			err = sc.f(dir)
			os.RemoveAll(dir)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", sc.name, err)
			os.Exit(1)
		}
	}
}

// logAll opens a log in dir, logs recs, syncs and closes it, and returns the name of
// the segment written.
func logAll(dir string, recs ...[]byte) (string, error) {
	w, err := wlog.NewSize(nil, nil, dir, segSize, compression.None)
	if err != nil {
		return "", err
	}
	for _, r := range recs {
		if err := w.Log(r); err != nil {
			return "", err
		}
	}
	if err := w.Sync(); err != nil {
		return "", err
	}
	_, last, err := wlog.Segments(dir)
	if err != nil {
		return "", err
	}
	return wlog.SegmentName(dir, last), w.Close()
}

// replay reads every record back and, on a read error, opens the log and repairs it
// as the TSDB head does; it returns what it read and the records left after a repair.
func replay(dir string) (got [][]byte, err error) {
	sr, err := wlog.NewSegmentsReader(dir)
	if err != nil {
		return nil, err
	}
	r := wlog.NewReader(sr)
	for r.Next() {
		got = append(got, bytes.Clone(r.Record()))
	}
	sr.Close()
	return got, r.Err()
}

func torn(dir string) error {
	recs := [][]byte{[]byte("first record"), []byte("second record"), []byte("third record")}
	seg, err := logAll(dir, recs...)
	if err != nil {
		return err
	}
	cut := int64(2*7 + len(recs[0]) + len(recs[1]) + 1) // one byte into the third header
	if err := os.Truncate(seg, cut); err != nil {
		return err
	}
	fmt.Printf("logged 3 records, closed; cut %s to %d bytes (one byte into record 3's header)\n", filepath.Base(seg), cut)
	got, rerr := replay(dir)
	for i, g := range got {
		fmt.Printf("record %d: %q\n", i+1, g)
	}
	if rerr != nil {
		fmt.Printf("reader error: %v\n", rerr)
	}
	return nil
}

func pageEnd(dir string) error {
	recs := [][]byte{bytes.Repeat([]byte("x"), 32*1024-2*7), []byte("second record"), []byte("third record")}
	if _, err := logAll(dir, recs...); err != nil {
		return err
	}
	fmt.Println("logged a 32754-byte record and two small ones, synced, closed cleanly")
	got, rerr := replay(dir)
	fmt.Printf("replay: %d of 3 records read back\n", len(got))
	if rerr == nil {
		return nil
	}
	fmt.Printf("reader error: %v\n", rerr)
	w, err := wlog.NewSize(nil, nil, dir, segSize, compression.None)
	if err != nil {
		return err
	}
	if err := w.Repair(rerr); err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	if err := w.Close(); err != nil {
		return err
	}
	got, rerr = replay(dir)
	fmt.Printf("after WL.Repair: %d of 3 records left (err %v)\n", len(got), rerr)
	return nil
}
