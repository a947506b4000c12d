// Command recovery-hole reproduces finding 10 natively, on the host, against the real
// github.com/akrylysov/pogreb v0.10.2 (no seedfall): a process that dies in the middle
// of a Put leaves a partial record at the end of the segment; the next Open runs
// recovery, which truncates the partial record but leaves the segment's in-memory size
// at the old length, so the writes made after it land past a hole of zeros that the
// following recovery truncates away.
//
// The partial record is written by this program (step "tear": the first 5 bytes of a
// record header appended to the segment), as a writer killed inside write(2) leaves it
// (Linux returns a short write when a fatal signal arrives between pages); killing a
// process at that instant is not reproducible, appending the bytes is.
//
//	go run ./native/recovery-hole            # library as released: 0 of 10 survive
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-recovery-truncate.patch ./native/recovery-hole   # 10 of 10
//
// Each step runs in a child process (this program re-executed), which exits without
// calling Close: a process death, not a power loss. Every Put is fsynced
// (BackgroundSyncInterval -1), so every key below was durable when Put returned.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/akrylysov/pogreb"
	"github.com/akrylysov/pogreb/fs"
)

func main() {
	step := flag.String("step", "", "internal: the child's step (put or count)")
	prefix := flag.String("prefix", "", "internal: key prefix")
	dir := flag.String("dir", "", "database directory (default: a new temporary one)")
	fsName := flag.String("fs", "mmap", "pogreb file system: mmap (fs.OSMMap, the default) or os (fs.OS)")
	flag.Parse()
	if *step != "" {
		if err := child(*step, *prefix, *dir, *fsName); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", *step, err)
			os.Exit(1)
		}
		os.Exit(0) // without Close: the process dies with the database open
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "pogreb-native-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer os.RemoveAll(d)
		*dir = d + "/db"
	}
	steps := [][]string{
		{"put", "a"},   // 10 synced keys, exit without Close
		{"tear", ""},   // the partial record a Put killed mid-write leaves
		{"put", "b"},   // reopen (recovery truncates the tear), 10 more synced keys, exit without Close
		{"count", "a"}, // reopen (recovery again)
		{"count", "b"},
	}
	for _, s := range steps {
		cmd := exec.Command(os.Args[0], "-step", s[0], "-prefix", s[1], "-dir", *dir, "-fs", *fsName)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "step %s %s: %v\n", s[0], s[1], err)
			os.Exit(1)
		}
	}
}

func child(step, prefix, dir, fsName string) error {
	if step == "tear" {
		seg := filepath.Join(dir, "00000-1.psg")
		f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.Write([]byte{2, 0, 5, 0, 0}); err != nil { // key size 2, value size 5, cut
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		fmt.Printf("appended a 5-byte partial record to %s (now %d bytes), as a Put killed mid-write leaves it\n", filepath.Base(seg), fi.Size())
		return f.Sync()
	}
	opts := &pogreb.Options{BackgroundSyncInterval: -1} // fsync every Put
	switch fsName {
	case "mmap":
		opts.FileSystem = fs.OSMMap
	case "os":
		opts.FileSystem = fs.OS
	default:
		return fmt.Errorf("-fs %q: want mmap or os", fsName)
	}
	db, err := pogreb.Open(dir, opts)
	if err != nil {
		return err
	}
	switch step {
	case "put":
		for i := range 10 {
			if err := db.Put([]byte(fmt.Sprintf("%s%d", prefix, i)), []byte("value")); err != nil {
				return err
			}
		}
		fmt.Printf("pid %d: put %s0..%s9 (each fsynced), exit without Close\n", os.Getpid(), prefix, prefix)
	case "count":
		n := 0
		for i := range 10 {
			v, err := db.Get([]byte(fmt.Sprintf("%s%d", prefix, i)))
			if err != nil {
				return err
			}
			if v != nil {
				n++
			}
		}
		fmt.Printf("pid %d: after reopening: %d of 10 %s-keys survive\n", os.Getpid(), n, prefix)
	}
	return nil
}
