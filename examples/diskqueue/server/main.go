// Command server wraps github.com/nsqio/go-diskqueue (nsqd's on-disk queue) behind the
// line protocol of examples/kvcheck/queuecheck, so that seedfall can crash it mid-write
// and check that every message the queue accepted is delivered: PUB answers OK once
// Put(payload) returned nil, NEXT a message read from ReadChan, or EMPTY when there was
// nothing to read for 200 ms.
//
// The queue is opened with its strongest setting: syncEvery 1, "number of writes per
// fsync", the value of nsqd's --sync-every that asks for an fsync after every message.
// Its files roll every 256 bytes (-max-bytes), so that a run rolls, reads and deletes
// many of them. -sync-every N is the negative control: a lazy queue that fsyncs every
// N messages. The data directory is created durably before New; the files in it are
// the library's job.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	diskqueue "github.com/nsqio/go-diskqueue"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/examples/kvcheck/queuecheck"
	"github.com/seedfall/seedfall/sim"
)

// emptyWait is how long NEXT waits for a message before it answers EMPTY. The queue's
// own goroutine offers a message as soon as it has read one, so in virtual time with no
// slow I/O a queue with anything left to read offers it well within this.
const emptyWait = 200 * time.Millisecond

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data/queue", "the queue's data `directory`")
	maxBytes := flag.Int64("max-bytes", 256, "maxBytesPerFile: roll to a new data file past this many `bytes`")
	syncEvery := flag.Int64("sync-every", 1, "syncEvery: messages per fsync (1: every message; more: the negative control)")
	flag.Parse()
	if err := run(*addr, *dir, *maxBytes, *syncEvery); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

func run(addr, dir string, maxBytes, syncEvery int64) error {
	if err := kvcheck.MkdirDurable(dir); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	logf := func(lvl diskqueue.LogLevel, f string, args ...any) {
		if lvl >= diskqueue.WARN {
			fmt.Printf("%s: %s\n", lvl, fmt.Sprintf(f, args...))
		}
	}
	q := diskqueue.New("q", dir, maxBytes, 1, 1024, syncEvery, 2*time.Second, logf)
	fmt.Printf("opened the queue, depth %d\n", q.Depth())
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return queuecheck.Serve(ln, queue{q})
}

// queue puts the library behind examples/kvcheck/queuecheck's protocol.
type queue struct{ q diskqueue.Interface }

func (q queue) Publish(p string) error { return q.q.Put([]byte(p)) }

// Next waits up to emptyWait for a message from ReadChan.
func (q queue) Next() (string, bool, error) {
	t := time.NewTimer(emptyWait)
	defer t.Stop()
	select {
	case m := <-q.q.ReadChan():
		return string(m), true, nil
	case <-t.C:
		return "", false, nil
	}
}
