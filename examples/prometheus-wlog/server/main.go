// Command server wraps the write-ahead log of Prometheus' TSDB
// (github.com/prometheus/prometheus/tsdb/wlog) behind the line protocol of
// examples/kvcheck, so that seedfall can crash it mid-write and check every
// acknowledged write.
//
//	PUT key value\n  ->  OK\n      (once WL.Log and WL.Sync returned: the record is fsynced)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// The start-up follows what the TSDB head does with its WAL (tsdb/db.go, head.Init):
// wlog.NewSize opens the log (it always starts a new segment), every segment is
// replayed with wlog.NewReader, and a read error is handed to WL.Repair, which drops the
// damaged tail and everything after it. If the library cannot open or repair its own
// log the server exits 1 with the error.
package main

import (
	"bytes"
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
	sr, err := wlog.NewSegmentsReader(dir)
	if err != nil {
		return fmt.Errorf("open wlog segments: %w", err)
	}
	r := wlog.NewReader(sr)
	n := 0
	for r.Next() {
		rec := r.Record()
		body, _, _ := strings.Cut(string(rec), "\n") // the filler, if any, follows a newline
		key, value, ok := strings.Cut(body, " ")
		sim.Always(ok && key != "", "every record the log returns is one the server wrote",
			map[string]any{"record": fmt.Sprintf("%q", rec)})
		if !ok || key == "" {
			return fmt.Errorf("wlog record %d: not a record the server wrote: %q", n, rec)
		}
		s.kv[key] = value
		n++
	}
	sr.Close()
	if rerr := r.Err(); rerr != nil {
		fmt.Printf("replayed %d records, repairing: %v\n", n, rerr)
		sim.Sometimes(true, "recovery repaired a damaged log", nil)
		if err := w.Repair(rerr); err != nil {
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
