// Command server wraps github.com/joncrlsn/dque (a durable FIFO queue of gob-encoded
// items in segment files) behind the line protocol of examples/kvcheck/queuecheck, so
// that seedfall can crash it mid-write and check that every item the queue accepted is
// delivered: PUB answers OK once Enqueue returned nil, NEXT the item Dequeue returned,
// or EMPTY when Dequeue returned dque.ErrEmpty.
//
// The queue runs in its default safe mode, in which every Enqueue and Dequeue fsyncs
// the segment file before it returns; segments hold 10 items (-per-segment), so that a
// run creates, fills and deletes many of them. -turbo is the negative control: turbo
// mode, which leaves the fsyncs to the filesystem. The parent directory is created
// durably before NewOrOpen; the queue's own directory and files are the library's job.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/joncrlsn/dque"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/examples/kvcheck/queuecheck"
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
	return queuecheck.Serve(ln, queue{q})
}

// queue puts the library behind examples/kvcheck/queuecheck's protocol.
type queue struct{ q *dque.DQue }

func (q queue) Publish(p string) error { return q.q.Enqueue(&item{Payload: p}) }

func (q queue) Next() (string, bool, error) {
	v, err := q.q.Dequeue()
	switch {
	case errors.Is(err, dque.ErrEmpty):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return v.(*item).Payload, true, nil
}
