// Command ack-before-fsync shows finding 27 natively: with syncEvery 1, Put returns
// before the fsync of its message. A child process puts 200 messages into a new queue,
// and after each Put returns writes "ack N" to stderr, as a server would answer its
// client. strace -f -y records the child's write(2) and fsync(2) calls with their
// threads and paths; the program then counts the acknowledgements written while the
// message's fsync had not returned (not started, or still running on another thread).
//
// Unpatched, most are. Patched (patches/fix-sync-before-ack.patch), none.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	diskqueue "github.com/nsqio/go-diskqueue"
	"github.com/seedfall/seedfall/examples/nativerun/straced"
)

const messages = 200

func main() {
	if args, ok := straced.Child(); ok {
		q := diskqueue.New("q", args[0], 1<<20, 1, 1024, 1, time.Second, func(diskqueue.LogLevel, string, ...any) {})
		for n := 1; n <= messages; n++ {
			if err := q.Put([]byte(fmt.Sprintf("message %d", n))); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "ack %d\n", n)
		}
		q.Close()
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var (
	line    = regexp.MustCompile(`^(\d+) +(.*)$`)
	datFile = regexp.MustCompile(`<[^>]*\.diskqueue\.\d+\.dat>`)
	ack     = regexp.MustCompile(`^write\(2<[^>]*>, "ack (\d+)\\n"`)
)

func run() error {
	dir, err := os.MkdirTemp("", "diskqueue-ack")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	trace := filepath.Join(dir, "strace.out")
	data := filepath.Join(dir, "queue")
	if err := os.Mkdir(data, 0o755); err != nil {
		return err
	}
	if out, err := straced.Run([]string{"-y", "-o", trace, "-e", "trace=write,fsync"}, data); err != nil {
		return fmt.Errorf("strace: %v\n%s", err, out)
	}
	f, err := os.Open(trace)
	if err != nil {
		return err
	}
	defer f.Close()
	// synced counts the fsyncs of a data file that returned; inflight marks the threads
	// in one. A data fsync covers every message written before it started.
	synced, written, acked, early := 0, 0, 0, 0
	started := map[string]int{} // thread -> messages written when its data fsync started
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		tid, call := m[1], m[2]
		switch {
		case strings.HasPrefix(call, "write(") && datFile.MatchString(call):
			written++
		case strings.HasPrefix(call, "fsync(") && datFile.MatchString(call):
			if strings.Contains(call, "<unfinished ...>") {
				started[tid] = written
			} else {
				synced = max(synced, written)
			}
		case strings.HasPrefix(call, "<... fsync resumed>"):
			if w, ok := started[tid]; ok {
				synced = max(synced, w)
				delete(started, tid)
			}
		default:
			if a := ack.FindStringSubmatch(call); a != nil {
				n, _ := strconv.Atoi(a[1])
				acked++
				if synced < n {
					early++
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Printf("%d messages put, %d data writes, %d acknowledged\n", messages, written, acked)
	fmt.Printf("acknowledged before their fsync returned: %d of %d\n", early, acked)
	return nil
}
