// Command read-eio reproduces finding 21 natively, on the host, against the real
// github.com/prometheus/prometheus/tsdb/wlog v0.316.0 (no seedfall): a read of the WAL
// that fails with EIO, as read(2) does on an unreadable sector, is reported as a
// *wlog.CorruptionErr, and WL.Repair, which Prometheus's DB.Open calls on any replay
// error (tsdb/db.go:1232-1246), truncates the segment there and deletes every later
// segment.
//
//	go run ./native/read-eio                 # library as released: records deleted
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-read-error-not-corruption.patch ./native/read-eio   # refused, nothing deleted
//
// A drive with an unreadable sector cannot be made on demand, so the program
// substitutes the read: segment 0's file returns its first 20,000 bytes and then
// fails every read with the error os.File.Read returns for EIO (*fs.PathError{"read",
// name, EIO}). Everything else is the library: the log is written and closed cleanly,
// replayed per segment as Head.Init does (tsdb/head.go:923-950), and the replay's error
// is handed to WL.Repair.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
)

const (
	records  = 300
	recSize  = 500
	segSize  = 2 * 32 * 1024 // two pages, as the seedfall server uses
	readable = 20000         // bytes of segment 0 readable before the bad sector
)

// eioFile fails every read after the first n bytes with EIO.
type eioFile struct {
	wlog.SegmentFile
	name string
	n    int
}

func (f *eioFile) Read(b []byte) (int, error) {
	if f.n <= 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EIO}
	}
	if len(b) > f.n {
		b = b[:f.n]
	}
	n, err := f.SegmentFile.Read(b)
	f.n -= n
	return n, err
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "wlog-read-eio-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w, err := wlog.NewSize(nil, nil, dir, segSize, compression.None)
	if err != nil {
		return err
	}
	for i := range records {
		rec := make([]byte, recSize)
		copy(rec, fmt.Sprintf("record %d", i))
		if err := w.Log(rec); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	first, last, err := wlog.Segments(dir)
	if err != nil {
		return err
	}
	fmt.Printf("logged %d records of %d bytes in segments %d-%d, closed cleanly\n", records, recSize, first, last)
	fmt.Printf("segment 0: reads fail with EIO after byte %d (an unreadable sector)\n", readable)

	// Open as DB.Open does (wlog.NewSize starts a new segment), then replay.
	w, err = wlog.NewSize(nil, nil, dir, segSize, compression.None)
	if err != nil {
		return err
	}
	defer w.Close()
	n, rerr := replay(dir, readable)
	fmt.Printf("replay: %d records read, error: %v\n", n, rerr)
	if rerr != nil {
		if err := w.Repair(rerr); err != nil {
			fmt.Printf("WL.Repair: %v\n", err)
		} else {
			fmt.Println("WL.Repair: ok")
		}
	}
	n, err = replay(dir, -1)
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	_, last, err = wlog.Segments(dir)
	if err != nil {
		return err
	}
	fmt.Printf("after: %d of %d records readable (the sector aside), last segment %d\n", n, records, last)
	return nil
}

// replay reads every segment as Head.Init does; if bad >= 0, segment 0 fails after bad
// bytes.
func replay(dir string, bad int) (int, error) {
	first, last, err := wlog.Segments(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := first; i >= 0 && i <= last; i++ {
		name := wlog.SegmentName(dir, i)
		seg, err := wlog.OpenReadSegment(name)
		if err != nil {
			return n, fmt.Errorf("open WAL segment: %d: %w", i, err)
		}
		s := seg
		if i == 0 && bad >= 0 {
			// Segment 0: its index is the zero value of the unexported field.
			s = &wlog.Segment{SegmentFile: &eioFile{SegmentFile: seg.SegmentFile, name: name, n: bad}}
		}
		sr := wlog.NewSegmentBufReader(s)
		r := wlog.NewReader(sr)
		for r.Next() {
			n++
		}
		sr.Close()
		if err := r.Err(); err != nil {
			return n, fmt.Errorf("read records: %w", err)
		}
	}
	return n, nil
}
