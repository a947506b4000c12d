// Command server wraps github.com/tidwall/wal behind a tiny line protocol, so that
// seedfall can crash it in the middle of an append and check every acknowledged write.
//
//	PUT key value\n  ->  OK\n      (once wal.Write returned: the entry is fsynced)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// Every PUT is one log entry "key value" at index LastIndex()+1. On start the server
// opens the log and reads every entry back; if the library cannot open or read its own
// log the server prints the library's error ("open wal: log corrupt") and exits 1,
// which seedfall reports as a failure: the acknowledged writes in it are unreachable.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
	"github.com/tidwall/wal"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/wal", "log `directory`")
	segSize := flag.Int("segment-size", 512, "wal.Options.SegmentSize in `bytes` (small, so segments cycle often)")
	noSync := flag.Bool("nosync", false, "wal.Options.NoSync: acknowledge before fsync (negative control)")
	flag.BoolVar(&exitOnWriteError, "exit-on-write-error", false, "exit 1 when wal.Write fails (fail-stop; declare the node \"on_exit\": \"restart\")")
	flag.Parse()
	if err := run(*addr, *dir, *segSize, *noSync); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

// exitOnWriteError makes a failed wal.Write (an fsync EIO among others) stop the server,
// so that it restarts and reopens the log instead of answering ERR.
var exitOnWriteError bool

type server struct {
	mu   sync.Mutex
	log  *wal.Log
	kv   map[string]string
	last uint64
}

func run(addr, dir string, segSize int, noSync bool) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	l, err := wal.Open(dir, &wal.Options{NoSync: noSync, SegmentSize: segSize})
	if err != nil {
		return fmt.Errorf("open wal: %w", err)
	}
	s := &server{log: l, kv: map[string]string{}}
	first, err := l.FirstIndex()
	if err != nil {
		return fmt.Errorf("open wal: %w", err)
	}
	last, err := l.LastIndex()
	if err != nil {
		return fmt.Errorf("open wal: %w", err)
	}
	for i := first; i <= last && i > 0; i++ {
		data, err := l.Read(i)
		if err != nil {
			return fmt.Errorf("read wal entry %d: %w", i, err)
		}
		key, value, ok := strings.Cut(string(data), " ")
		sim.Always(ok && key != "", "every entry the log returns is one the server wrote",
			map[string]any{"index": i, "entry": fmt.Sprintf("%q", data)})
		if !ok || key == "" {
			return fmt.Errorf("read wal entry %d: not an entry the server wrote: %q", i, data)
		}
		s.kv[key] = value
	}
	s.last = last
	fmt.Printf("opened wal: entries %d..%d, %d keys\n", first, last, len(s.kv))

	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, s)
}

// Put appends the entry; the log fsyncs it before returning (unless NoSync).
func (s *server) Put(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.log.Write(s.last+1, []byte(key+" "+value)); err != nil {
		if exitOnWriteError {
			fmt.Fprintf(os.Stderr, "write wal entry %d: %v: stopping\n", s.last+1, err)
			os.Exit(1)
		}
		return err
	}
	s.last++
	s.kv[key] = value
	return nil
}

// Get answers from the state replayed from the log plus what was written since.
func (s *server) Get(key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.kv[key]
	return v, ok, nil
}
