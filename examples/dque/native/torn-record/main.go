// Command torn-record reproduces the torn-record finding natively, on the host's own
// filesystem, with a real SIGKILL: a child process enqueues three items into a new
// dque queue (each Enqueue returns nil: written and fsynced) and is killed in the
// fourth, after Enqueue wrote the item's 4-byte length and before it wrote the item
// (strace injects the SIGKILL at the 8th write(2) to the segment file, before the
// kernel runs it; the child's goroutine is locked to its thread, as strace counts per
// thread). The program then opens the queue again and dequeues everything.
//
// Unpatched, Open fails for good (the segment ends in a length without its bytes,
// ErrCorruptedSegment), and the three acknowledged items cannot be read; dque's advice
// for ErrCorruptedSegment is to delete the file, which loses them. Patched
// (patches/fix-torn-record.patch), the unfinished record is cut off and the three items
// are delivered.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/joncrlsn/dque"
	"github.com/seedfall/seedfall/examples/nativerun/straced"
)

type item struct{ Payload string }

func builder() any { return &item{} }

var acked = []string{"m0-aaaa", "m1-bbbb", "m2-cccc"}

const killed = "m3-dddd"

func main() {
	if args, ok := straced.Child(); ok {
		// strace counts syscalls per thread: keep every write to the segment on one.
		runtime.LockOSThread()
		q, err := dque.NewOrOpen("q", args[0], 10, builder)
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		for _, p := range append(slices.Clone(acked), killed) {
			if err := q.Enqueue(&item{p}); err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
			fmt.Printf("acknowledged %s\n", p)
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
	dir, err := os.MkdirTemp("", "dque-torn-record")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	seg := filepath.Join(dir, "q", "0000000000001.dque")
	// -P: count only the writes to the segment file (not the child's own output).
	out, err := straced.Run(append([]string{"-P", seg}, straced.KillAt("write", 8)...), dir)
	fmt.Printf("child: %s; %v\n", strings.Join(strings.Split(strings.TrimSpace(out), "\n"), "; "), err)
	if fi, err := os.Stat(seg); err == nil {
		fmt.Printf("on disk: %s (%d bytes)\n", filepath.Base(seg), fi.Size())
	}

	q, err := dque.Open("q", dir, 10, builder)
	if err != nil {
		var c dque.ErrCorruptedSegment
		fmt.Printf("open after the kill: %v (ErrCorruptedSegment: %v)\n", err, errors.As(err, &c))
		fmt.Printf("acknowledged items unreadable: %d of %d\n", len(acked), len(acked))
		return nil
	}
	var got []string
	for {
		v, err := q.Dequeue()
		if err != nil {
			if !errors.Is(err, dque.ErrEmpty) {
				return fmt.Errorf("dequeue: %v", err)
			}
			break
		}
		got = append(got, v.(*item).Payload)
	}
	fmt.Printf("open after the kill: ok; dequeued %q\n", got)
	var lost []string
	for _, p := range acked {
		if !slices.Contains(got, p) {
			lost = append(lost, p)
		}
	}
	fmt.Printf("acknowledged items lost: %d of %d %s\n", len(lost), len(acked), strings.Join(lost, " "))
	return nil
}
