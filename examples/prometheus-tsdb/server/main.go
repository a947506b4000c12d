// Command server runs Prometheus' whole TSDB (github.com/prometheus/prometheus/tsdb at
// v0.316.0, unmodified): the head with its WAL and its memory-mapped head chunks
// (chunks_head/, written through the file and read through mmap), compaction into
// blocks (2-minute blocks here, so a run compacts many times and truncates the WAL
// behind a checkpoint), and DB.Open's recovery of all of it after a crash.
//
// Each series "s<k>" takes the samples 1, 2, 3, ... in order: sample i has timestamp
// i seconds and value i. The TSDB does not fsync a commit (its WAL is fsynced when a
// segment is complete), so a crash may lose the newest samples; what it must never do
// is return a series that is not 1..n for some n: a gap, a repeat, a wrong value, or a
// sample it was never given. Every LAST reads the series back through a querier, and
// start-up reads every series after DB.Open, checking exactly that (an Always
// property); a DB.Open error fails the run.
//
// Line protocol on -addr (sim.Listen), one request per line:
//
//	LAST s      ->  N n     (n: the series reads back as 1..n; 0 if it is empty)
//	ADD s i     ->  OK      (after Commit)  |  ERR reason
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/tsdb", "TSDB `directory`")
	block := flag.Duration("block", 2*time.Minute, "MinBlockDuration and MaxBlockDuration")
	perChunk := flag.Int("samples-per-chunk", 30, "SamplesPerChunk: a head chunk is cut, and m-mapped, after this many")
	flag.Parse()
	if err := run(*addr, *dir, *block, *perChunk); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

func run(addr, dir string, block time.Duration, perChunk int) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return err
	}
	opts := tsdb.DefaultOptions()
	opts.MinBlockDuration = block.Milliseconds()
	opts.MaxBlockDuration = block.Milliseconds()
	opts.SamplesPerChunk = perChunk
	opts.WALSegmentSize = 64 * 1024 // segments complete (and are fsynced) within a run
	// A block's chunk segment is preallocated to this size and truncated to its data when
	// the block is written; the smallest Prometheus allows (its flag
	// --storage.tsdb.max-block-chunk-segment-size), instead of 512 MiB, which the block
	// then maps whole if the truncate was lost in a crash (it is not synced,
	// tsdb/chunks/chunks.go:378-386, finalizeTail): harmless on Linux, but beyond the guest's
	// mmap_limit_mib here.
	opts.MaxBlockChunkSegmentSize = 1 << 20
	db, err := tsdb.Open(dir, nil, nil, opts, nil)
	if err != nil {
		return fmt.Errorf("tsdb.Open: %w", err)
	}
	s := &server{db: db}
	series, samples, err := s.checkAll()
	if err != nil {
		return err
	}
	fmt.Printf("opened: %d series, %d samples, %d blocks\n", series, samples, len(db.Blocks()))
	sim.Sometimes(len(db.Blocks()) > 0, "recovery opened compacted blocks", nil)
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			in := bufio.NewScanner(c)
			for in.Scan() {
				if _, err := fmt.Fprintln(c, s.answer(strings.Fields(in.Text()))); err != nil {
					return
				}
			}
		}()
	}
}

type server struct {
	db *tsdb.DB
	mu sync.Mutex // one append at a time: each series' samples in order
}

func (s *server) answer(req []string) string {
	switch {
	case len(req) == 2 && req[0] == "LAST":
		n, err := s.last(req[1])
		if err != nil {
			return "ERR " + err.Error()
		}
		return fmt.Sprintf("N %d", n)
	case len(req) == 3 && req[0] == "ADD":
		i, err := strconv.ParseInt(req[2], 10, 64)
		if err != nil || i < 1 {
			return "ERR bad sample number"
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		app := s.db.Appender(context.Background())
		if _, err := app.Append(0, labels.FromStrings("__name__", "seq", "s", req[1]), i*1000, float64(i)); err != nil {
			app.Rollback()
			return "ERR " + err.Error()
		}
		if err := app.Commit(); err != nil {
			return "ERR " + err.Error()
		}
		return "OK"
	}
	return "ERR bad request"
}

// last reads series s back and checks that it is 1..n; it returns n.
func (s *server) last(name string) (int64, error) {
	q, err := s.db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return 0, err
	}
	defer q.Close()
	set := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "s", name))
	var n int64
	for set.Next() {
		got, err := check(set.At())
		if err != nil {
			return 0, err
		}
		n = got
	}
	return n, set.Err()
}

// checkAll checks every series, as start-up does after DB.Open.
func (s *server) checkAll() (series int, samples int64, err error) {
	q, err := s.db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return 0, 0, err
	}
	defer q.Close()
	set := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "seq"))
	for set.Next() {
		n, err := check(set.At())
		if err != nil {
			return 0, 0, err
		}
		series++
		samples += n
	}
	return series, samples, set.Err()
}

// check reads one series and asserts that it is the samples 1..n in order; it returns
// n. A read error is returned; a series that is not 1..n fails the Always property.
func check(ser storage.Series) (int64, error) {
	it := ser.Iterator(nil)
	var n int64
	for it.Next() == chunkenc.ValFloat {
		t, v := it.At()
		ok := t == (n+1)*1000 && v == float64(n+1)
		sim.Always(ok, "every series reads back as the samples 1..n", map[string]any{
			"series": ser.Labels().Get("s"), "want": n + 1, "timestamp": t, "value": v,
		})
		if !ok {
			return 0, fmt.Errorf("series %s: sample %d reads back as timestamp %d value %v", ser.Labels().Get("s"), n+1, t, v)
		}
		n++
	}
	return n, it.Err()
}
