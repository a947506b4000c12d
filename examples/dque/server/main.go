// Command server wraps github.com/joncrlsn/dque (a durable FIFO queue of gob-encoded
// items in segment files) behind the line protocol of examples/diskqueue, so that
// seedfall can crash it mid-write and check that every item the queue accepted is
// delivered:
//
//	PUB payload\n  ->  OK\n             (once Enqueue returned nil)
//	NEXT\n         ->  MSG "payload"\n  (the item Dequeue returned, Go-quoted)
//	                   EMPTY\n          (Dequeue returned dque.ErrEmpty)
//
// The queue runs in its default safe mode, in which every Enqueue and Dequeue fsyncs
// the segment file before it returns; segments hold 10 items (-per-segment), so that a
// run creates, fills and deletes many of them. -turbo is the negative control: turbo
// mode, which leaves the fsyncs to the filesystem. The parent directory is created
// durably before NewOrOpen; the queue's own directory and files are the library's job.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/joncrlsn/dque"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

// item is what the queue stores: dque gob-encodes one per record.
type item struct{ Payload string }

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data", "the `directory` the queue's directory is created in")
	perSegment := flag.Int("per-segment", 10, "itemsPerSegment: items per segment file")
	turbo := flag.Bool("turbo", false, "turbo mode: no fsync per Enqueue or Dequeue (the negative control)")
	flag.Parse()
	if err := run(*addr, *dir, *perSegment, *turbo); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

func run(addr, dir string, perSegment int, turbo bool) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	q, err := dque.NewOrOpen("q", dir, perSegment, func() any { return &item{} })
	if err != nil {
		return fmt.Errorf("open the queue: %w", err)
	}
	if turbo {
		if err := q.TurboOn(); err != nil {
			return err
		}
	}
	first, last := q.SegmentNumbers()
	fmt.Printf("opened the queue: %d items, segments %d-%d\n", q.Size(), first, last)
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s := &server{q: q}
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go s.serve(conn)
	}
}

type server struct {
	q  *dque.DQue
	mu sync.Mutex // one request at a time, as the diskqueue server
}

func (s *server) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		s.mu.Lock()
		reply := s.handle(strings.TrimSuffix(line, "\n"))
		s.mu.Unlock()
		if _, err := io.WriteString(conn, reply); err != nil {
			return
		}
	}
}

func (s *server) handle(line string) string {
	cmd, arg, _ := strings.Cut(line, " ")
	switch cmd {
	case "PUB":
		if arg == "" {
			return "ERR usage: PUB payload\n"
		}
		if err := s.q.Enqueue(&item{Payload: arg}); err != nil {
			return "ERR " + oneLine(err) + "\n"
		}
		return "OK\n"
	case "NEXT":
		v, err := s.q.Dequeue()
		if errors.Is(err, dque.ErrEmpty) {
			return "EMPTY\n"
		}
		if err != nil {
			return "ERR " + oneLine(err) + "\n"
		}
		return "MSG " + strconv.Quote(v.(*item).Payload) + "\n"
	}
	return "ERR unknown command\n"
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }
