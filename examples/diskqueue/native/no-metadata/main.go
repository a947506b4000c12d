// Command no-metadata reproduces finding 26 natively, on the host's own filesystem,
// with a real SIGKILL: a process that puts its first message into a new go-diskqueue
// is killed at its first rename, the one that would put the queue's first metadata file
// in place (strace injects the SIGKILL at that syscall, before the kernel runs it). The
// data file holds the message; there is no metadata file. The program then opens the
// queue again, puts three shorter messages (each Put returns nil) and reads the queue
// until it has been empty for a second.
//
// Unpatched, New starts at offset 0 of the data file, the new messages overwrite the
// start of the old one, the reader's read-ahead takes the old message's remaining bytes
// for the next length, and the file is set aside as .bad: acknowledged messages are
// lost. Patched (patches/fix-missing-metadata.patch), writes start in a new file and
// every message is delivered.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	diskqueue "github.com/nsqio/go-diskqueue"
	"github.com/seedfall/seedfall/examples/nativerun/straced"
)

const first = "m0-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

var acked = []string{"m1-b", "m2-cc", "m3-ddd"}

func open(dir string) diskqueue.Interface {
	logf := func(lvl diskqueue.LogLevel, f string, args ...any) {
		if lvl >= diskqueue.WARN {
			fmt.Printf("  diskqueue %s: %s\n", lvl, fmt.Sprintf(f, args...))
		}
	}
	return diskqueue.New("q", dir, 1024, 1, 1024, 1, time.Second, logf)
}

func main() {
	if args, ok := straced.Child(); ok {
		q := open(args[0])
		err := q.Put([]byte(first))
		// The ioLoop renames the metadata into place after Put returns; the SIGKILL
		// comes there. Reaching the end means strace did not kill us.
		time.Sleep(2 * time.Second)
		fmt.Printf("child not killed (Put: %v)\n", err)
		os.Exit(3)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "diskqueue-no-metadata")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	out, err := straced.Run(straced.KillAt("rename,renameat,renameat2", 1), dir)
	fmt.Printf("child put %q and was killed at its first rename: %v %s\n", first, err, strings.TrimSpace(out))
	fmt.Printf("on disk: %s\n", listing(dir))

	q := open(dir)
	for _, m := range acked {
		if err := q.Put([]byte(m)); err != nil {
			return fmt.Errorf("put %s: %v", m, err)
		}
	}
	fmt.Printf("after the restart, put and acknowledged: %s\n", strings.Join(acked, " "))
	var got []string
	for {
		select {
		case m := <-q.ReadChan():
			got = append(got, string(m))
			continue
		case <-time.After(time.Second):
		}
		break
	}
	q.Close()
	fmt.Printf("delivered: %q\n", got)
	var lost []string
	for _, m := range acked {
		if !slices.Contains(got, m) {
			lost = append(lost, m)
		}
	}
	fmt.Printf("on disk: %s\n", listing(dir))
	fmt.Printf("acknowledged messages lost: %d of %d %s\n", len(lost), len(acked), strings.Join(lost, " "))
	return nil
}

// listing names the queue's files and their sizes (not the metadata's temporary files).
func listing(dir string) string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err == nil {
			out = append(out, fmt.Sprintf("%s (%d bytes)", e.Name(), fi.Size()))
		}
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, ", ")
}
