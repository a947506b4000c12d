//go:build linux

// Command header-oom checks natively, on the host, against the real
// github.com/akrylysov/pogreb v0.10.2 (no seedfall), what the corruption table's
// footnote 6 saw in the simulator: the segment iterator allocates the record size a
// damaged header claims (segment.go:132-133) before it reads the record and checks its
// CRC. Under seedfall the wasm guest's 4 GiB address space made that fatal (`fatal
// error: out of memory`); this program asks what a native process does.
//
//	go run ./native/header-oom                  # 64-bit: what Open does and what it cost
//	go run ./native/header-oom -limit-data 1024 # a 1 GiB limit on the heap (RLIMIT_DATA)
//	GOARCH=386 go run ./native/header-oom       # a 32-bit process
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-record-size-before-alloc.patch ./native/header-oom -limit-data 1024
//
// Steps, each in a child process (this program re-executed): "put" opens a new
// database, puts 10 keys (each fsynced) and exits without Close, as a killed process
// does, so the next Open runs recovery, which reads every record with the iterator;
// "open" (the control) opens it undamaged, runs that recovery and exits without Close
// again; "damage" overwrites the value-size field of the fifth record with 0x7ffffff0,
// the bytes a misdirected write or a flipped high bit leaves (the record's CRC no
// longer matches); the second "open" runs recovery over it. Each open reports what
// Open returned, how many keys it serves, and the process's peak virtual size (VmPeak)
// and peak resident size (VmHWM) from /proc/self/status. -limit-data sets RLIMIT_DATA
// (ulimit -d) in the open steps: a hard limit on the private memory the Go heap maps,
// which leaves pogreb's shared file mappings alone.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/akrylysov/pogreb"
	"github.com/akrylysov/pogreb/fs"
)

// recordSize is the encoded size of each record put below: key size (2), value size
// (4), a 2-byte key, a 100-byte value, CRC (4).
const recordSize = 2 + 4 + 2 + 100 + 4

// segHeader is pogreb's segment header size (header.go:10).
const segHeader = 512

func main() {
	step := flag.String("step", "", "internal: the child's step (put, damage or open)")
	dir := flag.String("dir", "", "database directory (default: a new temporary one)")
	fsName := flag.String("fs", "mmap", "pogreb file system: mmap (fs.OSMMap, the default) or os (fs.OS)")
	limit := flag.Int("limit-data", 0, "RLIMIT_DATA in `MiB` for the open steps (0: none)")
	flag.Parse()
	if *step != "" {
		if *step == "open" && *limit > 0 {
			lim := &syscall.Rlimit{Cur: uint64(*limit) << 20, Max: uint64(*limit) << 20}
			if err := syscall.Setrlimit(syscall.RLIMIT_DATA, lim); err != nil {
				fmt.Printf("setrlimit: %v\n", err)
				os.Exit(1)
			}
		}
		if err := child(*step, *dir, *fsName); err != nil {
			fmt.Printf("%s: %v\n", *step, err)
			os.Exit(1)
		}
		os.Exit(0) // without Close: the process dies with the database open
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "pogreb-header-oom-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer os.RemoveAll(d)
		*dir = d + "/db"
	}
	fmt.Printf("%s/%s process, -fs %s, -limit-data %d MiB\n", runtime.GOOS, runtime.GOARCH, *fsName, *limit)
	for _, s := range []string{"put", "open", "damage", "open"} {
		cmd := exec.Command(os.Args[0], "-step", s, "-dir", *dir, "-fs", *fsName, "-limit-data", fmt.Sprint(*limit))
		out, err := cmd.CombinedOutput()
		os.Stdout.Write(summary(out))
		if err != nil {
			fmt.Printf("step %s: the process died: %v\n", s, err)
			// A restart finds the lock file and the header again.
			out, err = exec.Command(os.Args[0], "-step", s, "-dir", *dir, "-fs", *fsName, "-limit-data", fmt.Sprint(*limit)).CombinedOutput()
			os.Stdout.Write(summary(out))
			fmt.Printf("step %s again, as a restart runs it: %v\n", s, err)
			return
		}
	}
}

// summary keeps a child's own lines, pogreb's recovery log lines that say what it
// truncated, and a fatal error's first lines, not its goroutine dump.
func summary(b []byte) []byte {
	var out []string
	fatal := 0
	for _, l := range strings.SplitAfter(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "fatal error") || strings.HasPrefix(l, "runtime:"):
			fatal = 1
			out = append(out, l)
		case fatal > 0:
			if strings.TrimSpace(l) == "" || fatal > 3 {
				fatal = -1
				continue
			}
			fatal++
			out = append(out, l)
		case fatal < 0:
		case strings.HasPrefix(l, "pogreb: ") && !strings.Contains(l, "corrupt") && !strings.Contains(l, "truncat"):
		default:
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, ""))
}

func child(step, dir, fsName string) error {
	if step == "damage" {
		seg := filepath.Join(dir, "00000-1.psg")
		f, err := os.OpenFile(seg, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		off := int64(segHeader + 4*recordSize + 2) // the fifth record's value size
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], 0x7ffffff0)
		if _, err := f.WriteAt(b[:], off); err != nil {
			return err
		}
		fmt.Printf("damage: value size of record 5 (%s @%d) set to %d bytes\n", filepath.Base(seg), off, 0x7ffffff0)
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
	if step == "open" {
		defer fmt.Printf("open: %s\n", memory())
	}
	if err != nil {
		return fmt.Errorf("pogreb.Open: %w", err)
	}
	switch step {
	case "put":
		for i := range 10 {
			if err := db.Put([]byte(fmt.Sprintf("k%d", i)), []byte(strings.Repeat("v", 100))); err != nil {
				return err
			}
		}
		fmt.Println("put: k0..k9 (each fsynced), exit without Close")
	case "open":
		n := 0
		for i := range 10 {
			v, err := db.Get([]byte(fmt.Sprintf("k%d", i)))
			if err != nil {
				return err
			}
			if v != nil {
				n++
			}
		}
		fmt.Printf("open: pogreb.Open ok, %d of 10 keys served\n", n)
	}
	return nil
}

// memory returns VmPeak and VmHWM from /proc/self/status.
func memory() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmPeak:") || strings.HasPrefix(l, "VmHWM:") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, ", ")
}
