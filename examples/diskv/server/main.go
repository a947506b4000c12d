// Command server wraps github.com/peterbourgon/diskv/v3 behind the line protocol of
// examples/kvcheck, so that seedfall can crash it mid-write and check every
// acknowledged write.
//
//	PUT key value\n  ->  OK\n      (once WriteStream(key, value, true) returned)
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// diskv keeps one file per key. The server uses its strongest documented settings:
// Options.TempDir ("will enable filesystem atomic writes by writing temporary files to
// that location before being moved to BasePath", on the same filesystem) and
// WriteStream with sync true ("performs an explicit sync on the file as soon as it's
// written"; Write's doc points there "if you need stronger guarantees"). Both
// directories are created durably before New (diskv would create them itself, without
// a directory fsync; the files in them are the library's job). -nosync writes with
// Write (no fsync): the negative control.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/peterbourgon/diskv/v3"
	"github.com/seedfall/seedfall/examples/kvcheck"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	base := flag.String("base", "/data/diskv/store", "Options.BasePath: the `directory` of the key files")
	temp := flag.String("temp", "/data/diskv/tmp", "Options.TempDir: the `directory` of the temporary files")
	noSync := flag.Bool("nosync", false, "Write instead of WriteStream(..., true): acknowledge before fsync (negative control)")
	flag.Parse()
	if err := run(*addr, *base, *temp, *noSync); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

type server struct {
	d    *diskv.Diskv
	sync bool
}

func run(addr, base, temp string, noSync bool) error {
	for _, dir := range []string{base, temp} {
		if err := kvcheck.MkdirDurable(dir); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	d := diskv.New(diskv.Options{BasePath: base, TempDir: temp})
	fmt.Println("opened diskv")
	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return kvcheck.Serve(ln, &server{d: d, sync: !noSync})
}

func (s *server) Put(key, value string) error {
	if !s.sync {
		return s.d.Write(key, []byte(value))
	}
	return s.d.WriteStream(key, strings.NewReader(value), true)
}

func (s *server) Get(key string) (string, bool, error) {
	v, err := s.d.Read(key)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(v), true, nil
}
