// Command index-commit shows the index finding's missing syncs natively, on the host,
// against the real github.com/lotusdblabs/lotusdb/v2 v2.1.0 (no seedfall). lotusdb
// opens each index partition (INDEX.0-2, bbolt files) with NoSync true (bptree.go:43)
// and commits CreateBucketIfNotExists at every Open (bptree.go:53-61). A child process
// opens a new DB and closes it under strace -f -y (pwrite64, fdatasync, fsync); the
// program then prints, for each INDEX file, the system calls of that commit: the new
// pages' writes, the meta page's write (offset 0) that points to them, and the syncs
// between and after.
//
// Unpatched, no sync: a power loss can keep the meta page and drop the pages (bbolt
// then panics at every Open: native/index-meta-only builds that state). With
// patches/lotusdb-fix-index-nosync.patch, bbolt fdatasyncs the pages before it writes
// the meta page, and the meta page after.
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

func main() {
	// lotusdb's package init makes an empty directory (options.go:147): remove it.
	os.Remove(lotusdb.DefaultOptions.DirPath)
	if args, ok := straced.Child(); ok {
		opts := lotusdb.DefaultOptions
		opts.DirPath = args[0]
		opts.Sync = true
		db, err := lotusdb.Open(opts)
		if err == nil {
			err = db.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var (
	call  = regexp.MustCompile(`^\d+ +(pwrite64|fdatasync|fsync)\(\d+<[^>]*/(INDEX\.\d+)>(?:, "[^"]*"(?:\.\.\.)?, (\d+), (\d+))?`)
	pages = regexp.MustCompile(`^page @\d+`)
)

func run() error {
	dir, err := os.MkdirTemp("", "lotusdb-index-commit-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	trace := filepath.Join(dir, "strace.out")
	if out, err := straced.Run([]string{"-y", "-s", "0", "-o", trace, "-e", "trace=pwrite64,fdatasync,fsync"}, filepath.Join(dir, "db")); err != nil {
		return fmt.Errorf("strace: %v\n%s", err, out)
	}
	f, err := os.Open(trace)
	if err != nil {
		return err
	}
	defer f.Close()
	// Per file: bbolt's init writes pages 0-3 at offset 0 and syncs them; every call
	// after that init write belongs to the commit.
	ops := map[string][]string{}
	initDone := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := call.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name, file := m[1], m[2]
		if name != "pwrite64" {
			if initDone[file] && len(ops[file]) > 0 {
				ops[file] = append(ops[file], name)
			}
			continue
		}
		size, _ := strconv.Atoi(m[3])
		off, _ := strconv.Atoi(m[4])
		switch {
		case !initDone[file]:
			initDone[file] = off == 0
		case off == 0:
			ops[file] = append(ops[file], fmt.Sprintf("meta page @0+%d", size))
		default:
			ops[file] = append(ops[file], fmt.Sprintf("page @%d+%d", off, size))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for _, file := range []string{"INDEX.0", "INDEX.1", "INDEX.2"} {
		o := ops[file]
		meta := -1
		for i, s := range o {
			if strings.HasPrefix(s, "meta page") {
				meta = i
			}
		}
		if meta < 0 {
			return fmt.Errorf("%s: no meta page write after bbolt's init in the trace: %v", file, o)
		}
		before, after, written := 0, 0, 0
		for i, s := range o {
			switch {
			case pages.MatchString(s):
				written++
			case i < meta && written > 0 && !strings.HasPrefix(s, "meta"):
				before++
			case i > meta:
				after++
			}
		}
		fmt.Printf("%s, the commit lotusdb.Open makes: %s\n", file, strings.Join(o, ", "))
		fmt.Printf("%s: %d new pages written, syncs before the meta page that points to them: %d, after it: %d\n", file, written, before, after)
	}
	return nil
}
