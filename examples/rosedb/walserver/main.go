// Command walserver wraps github.com/rosedblabs/wal behind a tiny line protocol, so
// that seedfall can crash it in the middle of a write and check every acknowledged
// write.
//
//	PUT key value\n  ->  OK\n      (once wal.Write returned with Options.Sync: fsynced)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// Every PUT is one WAL record "key value". On start the server replays the WAL with a
// Reader. A crash in the middle of a write leaves a torn chunk at the end of the log,
// so a replay error is what a user expects after a crash: the server stops there,
// prints the error and serves what it read. That is only safe if the library never
// writes after a torn chunk; rosedblabs/wal v1.3.8 does, and the client then finds the
// acknowledged writes it made after the crash missing.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/rosedblabs/wal"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/wal", "WAL `directory`")
	segSize := flag.Int64("segment-size", 4096, "wal.Options.SegmentSize in `bytes` (small, so segments rotate)")
	noSync := flag.Bool("nosync", false, "wal.Options.Sync false: acknowledge before fsync (negative control)")
	flag.Parse()
	if err := run(*addr, *dir, *segSize, !*noSync); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

type server struct {
	mu sync.Mutex
	w  *wal.WAL
	kv map[string]string
}

func run(addr, dir string, segSize int64, syncWrites bool) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create WAL directory: %w", err)
	}
	w, err := wal.Open(wal.Options{DirPath: dir, SegmentSize: segSize, SegmentFileExt: ".SEG", Sync: syncWrites})
	if err != nil {
		return fmt.Errorf("open wal: %w", err)
	}
	s := &server{w: w, kv: map[string]string{}}
	r := w.NewReader()
	n := 0
	var replayErr error
	for {
		data, _, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			replayErr = err
			break
		}
		key, value, ok := strings.Cut(string(data), " ")
		if !ok || key == "" {
			return fmt.Errorf("replay wal: record %d is not one the server wrote: %q", n+1, data)
		}
		s.kv[key] = value
		n++
	}
	if replayErr != nil {
		fmt.Printf("replayed %d records, stopped at a damaged chunk: %v\n", n, replayErr)
	} else {
		fmt.Printf("replayed %d records\n", n)
	}

	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, s)
}

// Put writes the chunk; the WAL fsyncs it before returning (Options.Sync).
func (s *server) Put(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.Write([]byte(key + " " + value)); err != nil {
		return err
	}
	s.kv[key] = value
	return nil
}

// Get answers from the state replayed from the WAL plus what was written since.
func (s *server) Get(key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.kv[key]
	return v, ok, nil
}
