// Command server wraps the write-ahead log of Prometheus' TSDB
// (github.com/prometheus/prometheus/tsdb/wlog) behind the line protocol of
// examples/kvcheck, so that seedfall can crash it mid-write and check every
// acknowledged write.
//
//	PUT key value\n  ->  OK\n      (once WL.Log and WL.Sync returned: the record is fsynced)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// The start-up does what Prometheus' TSDB does with its WAL at v0.316.0 (see replay):
// wlog.NewSize opens the log (it always starts a new segment), every segment is
// replayed on its own with wlog.NewReader, as Head.Init does, and any error of the
// replay is handed to WL.Repair, as DB.Open does; Repair refuses an error that is not a
// *wlog.CorruptionErr and otherwise drops the damaged tail and every later segment. If
// the library cannot open or repair its own log the server exits 1 with the error.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/wal", "log `directory`")
	segSize := flag.Int("segment-size", 2*32*1024, "segment size in `bytes` (a multiple of the 32 KiB page)")
	noSync := flag.Bool("nosync", false, "acknowledge after WL.Log without WL.Sync (negative control)")
	fill := flag.Int("fill", 0, "pad each record with filler to a random size of up to `n` bytes; a quarter of them to exactly a page minus two headers, so records cross page ends and the writer logs its zero-length fragments (0: no filler)")
	flag.Parse()
	if *fill < 0 || *fill > pageFill {
		fmt.Fprintf(os.Stderr, "-fill %d: want 0 to %d\n", *fill, pageFill)
		os.Exit(2)
	}
	if err := run(*addr, *dir, *segSize, *noSync, *fill); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

// pageFill is the size of a record that, logged at the start of a 32 KiB page, leaves
// exactly one record header (7 bytes) free in it: the next record then starts with a
// zero-length fragment (tsdb/wlog/wlog.go:717-735). A new segment starts page-aligned,
// and NewSize starts one at every open.
const pageFill = 32*1024 - 2*7

type server struct {
	mu     sync.Mutex
	w      *wlog.WL
	kv     map[string]string
	noSync bool
	fill   int
}

func run(addr, dir string, segSize int, noSync bool, fill int) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	w, err := wlog.NewSize(nil, nil, dir, segSize, compression.None)
	if err != nil {
		return fmt.Errorf("open wlog: %w", err)
	}
	s := &server{w: w, kv: map[string]string{}, noSync: noSync, fill: fill}
	n, err := s.replay(dir)
	if _, ok := errors.AsType[*foreignRecordError](err); ok {
		return err
	}
	if err != nil {
		fmt.Printf("replayed %d records, repairing: %v\n", n, err)
		sim.Sometimes(true, "recovery repaired a damaged log", nil)
		if err := w.Repair(err); err != nil {
			return fmt.Errorf("repair wlog: %w", err)
		}
	} else {
		fmt.Printf("replayed %d records, %d keys\n", n, len(s.kv))
	}
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, s)
}

// replay reads every segment of dir into s.kv and returns the number of records read.
// It follows Head.Init at v0.316.0 (tsdb/head.go:923-950): wlog.Segments, then per
// segment wlog.OpenReadSegment, wlog.NewSegmentBufReaderWithOffset and a fresh
// wlog.NewReader; an open error is returned as is, a reader error as loadWAL returns
// it (tsdb/head_wal.go:504-506: "read records: %w" around Reader.Err, a
// *wlog.CorruptionErr). Its caller, like DB.Open (tsdb/db.go:1232-1246), hands any
// error to WL.Repair. (The TSDB's checkpoint and chunk snapshot are not used here.)
func (s *server) replay(dir string) (int, error) {
	first, last, err := wlog.Segments(dir)
	if err != nil {
		return 0, fmt.Errorf("finding WAL segments: %w", err)
	}
	n := 0
	for i := first; i >= 0 && i <= last; i++ {
		seg, err := wlog.OpenReadSegment(wlog.SegmentName(dir, i))
		if err != nil {
			return n, fmt.Errorf("open WAL segment: %d: %w", i, err)
		}
		sr, err := wlog.NewSegmentBufReaderWithOffset(0, seg)
		if err != nil {
			seg.Close()
			return n, fmt.Errorf("segment reader (offset=0): %w", err)
		}
		r := wlog.NewReader(sr)
		for r.Next() {
			rec := r.Record()
			body, _, _ := strings.Cut(string(rec), "\n") // the filler, if any, follows a newline
			key, value, ok := strings.Cut(body, " ")
			sim.Always(ok && key != "", "every record the log returns is one the server wrote",
				map[string]any{"record": fmt.Sprintf("%q", rec)})
			if !ok || key == "" {
				sr.Close()
				return n, &foreignRecordError{n: n, rec: rec}
			}
			s.kv[key] = value
			n++
		}
		sr.Close()
		if err := r.Err(); err != nil {
			return n, fmt.Errorf("read records: %w", err)
		}
	}
	return n, nil
}

// foreignRecordError is a record the server did not write: the harness's own check,
// which stops the start-up instead of repairing.
type foreignRecordError struct {
	n   int
	rec []byte
}

func (e *foreignRecordError) Error() string {
	return fmt.Sprintf("wlog record %d: not a record the server wrote: %q", e.n, e.rec)
}

// Put logs the record and fsyncs the active segment before it returns (unless -nosync).
func (s *server) Put(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := []byte(key + " " + value)
	if s.fill > 0 {
		size := pageFill
		if rand.IntN(4) != 0 {
			size = 1 + rand.IntN(s.fill)
		}
		if size > len(rec)+1 {
			rec = append(rec, '\n')
			rec = append(rec, bytes.Repeat([]byte{'.'}, size-len(rec))...)
		}
	}
	if err := s.w.Log(rec); err != nil {
		return err
	}
	if !s.noSync {
		if err := s.w.Sync(); err != nil {
			return err
		}
	}
	s.kv[key] = value
	return nil
}

func (s *server) Get(key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.kv[key]
	return v, ok, nil
}
