// Command options-sync shows the Options.Sync finding natively, on the host, against
// the real github.com/lotusdblabs/lotusdb/v2 v2.1.0 (no seedfall): a DB opened with
// Options.Sync true ("Sync being true means write followed by fsync", options.go:35-36)
// never fsyncs a Put. Losing the Puts needs a power loss, which a program cannot
// cause, so the evidence is the system calls: a child process opens a new DB with
// Options.Sync true, makes 10 DB.Put calls and after each one returns writes "ack N"
// to stderr, as a server would answer its client; strace -f -y records its write(2),
// fsync(2) and fdatasync(2) calls with their paths. The program then counts the writes
// and fsyncs of the memtable WAL (000000001.SEG.1) and the acknowledgements written
// while the Put's WAL write had not been fsynced.
//
// Unpatched: 10 writes, 0 fsyncs, 10 of 10 acknowledged before their fsync. With
// patches/lotusdb-fix-options-sync.patch: 10 fsyncs, 0 of 10.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/lotusdblabs/lotusdb/v2"
	"github.com/seedfall/seedfall/examples/nativerun/straced"
)

const puts = 10

func main() {
	// lotusdb's package init makes an empty directory (options.go:147): remove it.
	os.Remove(lotusdb.DefaultOptions.DirPath)
	if args, ok := straced.Child(); ok {
		opts := lotusdb.DefaultOptions
		opts.DirPath = args[0]
		opts.Sync = true
		db, err := lotusdb.Open(opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for n := 1; n <= puts; n++ {
			if err := db.Put([]byte(fmt.Sprintf("k%d", n)), []byte("value")); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "ack %d\n", n)
		}
		os.Exit(0) // no Close: the process ends as after a kill following the last ack
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var (
	line = regexp.MustCompile(`^(\d+) +(.*)$`)
	seg  = regexp.MustCompile(`<[^>]*/000000001\.SEG\.1>`)
	ack  = regexp.MustCompile(`^write\(2<[^>]*>, "ack (\d+)\\n"`)
)

func run() error {
	dir, err := os.MkdirTemp("", "lotusdb-options-sync-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	trace := filepath.Join(dir, "strace.out")
	data := filepath.Join(dir, "db")
	if out, err := straced.Run([]string{"-y", "-o", trace, "-e", "trace=write,fsync,fdatasync"}, data); err != nil {
		return fmt.Errorf("strace: %v\n%s", err, out)
	}
	f, err := os.Open(trace)
	if err != nil {
		return err
	}
	defer f.Close()
	// synced is the number of WAL writes made before the last WAL fsync that returned;
	// started marks the threads inside one.
	written, fsyncs, synced, acked, early := 0, 0, 0, 0, 0
	started := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		tid, call := m[1], m[2]
		switch {
		case strings.HasPrefix(call, "write(") && seg.MatchString(call):
			written++
		case (strings.HasPrefix(call, "fsync(") || strings.HasPrefix(call, "fdatasync(")) && seg.MatchString(call):
			fsyncs++
			if strings.Contains(call, "<unfinished ...>") {
				started[tid] = written
			} else {
				synced = max(synced, written)
			}
		case strings.HasPrefix(call, "<... fsync resumed>"), strings.HasPrefix(call, "<... fdatasync resumed>"):
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
	fmt.Printf("Options.Sync true: %d DB.Put calls acknowledged, %d writes and %d fsyncs of 000000001.SEG.1\n", acked, written, fsyncs)
	fmt.Printf("acknowledged before their WAL write was fsynced: %d of %d\n", early, acked)
	return nil
}
