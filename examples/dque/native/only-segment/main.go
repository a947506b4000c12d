// Command only-segment reproduces the only-segment finding natively, on the host's own
// filesystem, with a real SIGKILL: a child process opens a new dque queue of 3 items
// per segment, enqueues three items and dequeues them. The third Dequeue empties the
// queue's only segment: it writes and fsyncs the removal record, then deletes the
// segment file; strace kills the child at that unlink(2), before the kernel runs it.
// The program then opens the queue twice.
//
// Unpatched, the first Open fails: load deletes the empty, complete segment 1 (the fix
// of dque PR #40 and #41) and opens segment 2, which does not exist. The second Open
// succeeds, on a new segment 1. Patched (patches/fix-only-segment.patch), the first Open
// succeeds and starts segment 2, as Dequeue does.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/joncrlsn/dque"
	"github.com/seedfall/seedfall/examples/nativerun/straced"
)

type item struct{ Payload string }

func builder() any { return &item{} }

var items = []string{"m0", "m1", "m2"}

func main() {
	if args, ok := straced.Child(); ok {
		q, err := dque.NewOrOpen("q", args[0], 3, builder)
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		for _, p := range items {
			if err := q.Enqueue(&item{p}); err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
		}
		fmt.Printf("enqueued %s; ", strings.Join(items, " "))
		for range items {
			v, err := q.Dequeue()
			if err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
			fmt.Printf("dequeued %s; ", v.(*item).Payload)
		}
		fmt.Println("child not killed")
		os.Exit(3)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "dque-only-segment")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	out, err := straced.Run(straced.KillAt("unlink,unlinkat", 1), dir)
	fmt.Printf("child: %s, killed at its first unlink: %v\n", strings.TrimSpace(out), err)
	for i := 1; i <= 2; i++ {
		q, err := dque.Open("q", dir, 3, builder)
		if err != nil {
			fmt.Printf("open %d: %v\n", i, err)
			continue
		}
		first, last := q.SegmentNumbers()
		fmt.Printf("open %d: ok, segments %d-%d, Size() = %d\n", i, first, last, q.Size())
		q.Close()
	}
	return nil
}
