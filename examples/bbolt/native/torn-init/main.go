// Command torn-init reproduces finding 35 natively, on the host, against the real
// go.etcd.io/bbolt (no seedfall): Open creates the database with one write of four
// pages (init, db.go:655) and syncs it; a crash inside that write leaves a prefix of
// it, and every later Open of that prefix fails or panics.
//
//	go run ./native/torn-init                   # every prefix: Open fails or panics
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-torn-init.patch ./native/torn-init   # every prefix opens
//
// It opens a new database (PageSize 4096, as the example's server does) and closes it
// at once, so that the file holds exactly init's write, 16384 bytes. Then, for each
// length a crash can leave of that write, it writes that prefix to a new file, as the
// disk keeps it: 512 bytes (a power loss with 512-byte sectors) and 4096, 8192 and
// 12288 (whole pages: a power loss, or a process killed inside the write, which Linux
// stops between pages). A child process opens each prefix and writes a key and reads it
// back: bbolt reads the pages past the end of the file through its mapping, and Linux
// kills a process that touches a mapped page past the end of its file (SIGBUS).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

func main() {
	child := flag.String("child", "", "open this database `file`, write a key, read it back")
	flag.Parse()
	if *child != "" {
		fmt.Print(reopen(*child))
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func options() *bolt.Options { return &bolt.Options{PageSize: 4096, Timeout: time.Second} }

func run() error {
	dir, err := os.MkdirTemp("", "bbolt-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fresh := filepath.Join(dir, "fresh.db")
	db, err := bolt.Open(fresh, 0o600, options())
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	image, err := os.ReadFile(fresh)
	if err != nil {
		return err
	}
	fmt.Printf("a new database: %d bytes\n", len(image))
	for _, n := range []int{512, 4096, 8192, 12288} {
		if n >= len(image) {
			return fmt.Errorf("the new database holds %d bytes, not four pages of 4096", len(image))
		}
		path := filepath.Join(dir, fmt.Sprintf("torn-%d.db", n))
		if err := os.WriteFile(path, image[:n], 0o600); err != nil {
			return err
		}
		fmt.Printf("init cut at %d of %d bytes: %s\n", n, len(image), inChild(path))
	}
	return nil
}

// inChild runs reopen in a child process, which may die.
func inChild(path string) string {
	self, err := os.Executable()
	if err != nil {
		return err.Error()
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(self, "-child", path)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		why, _, _ := strings.Cut(strings.TrimSpace(errOut.String()), "\n")
		for _, l := range strings.Split(errOut.String(), "\n") {
			if strings.HasPrefix(l, "[signal ") {
				why = l // [signal SIGBUS: bus error ...]
			}
		}
		return fmt.Sprintf("the process dies (%v): %s", err, why)
	}
	return out.String()
}

// reopen opens the file, writes a key and reads it back, and says how that went.
func reopen(path string) (res string) {
	defer func() {
		if r := recover(); r != nil {
			res = fmt.Sprintf("Open panics: %v", r)
		}
	}()
	db, err := bolt.Open(path, 0o600, options())
	if err != nil {
		return "Open: " + err.Error()
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("kv"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	}); err != nil {
		return "Open ok, then Update: " + err.Error()
	}
	var got []byte
	if err := db.View(func(tx *bolt.Tx) error {
		got = append(got, tx.Bucket([]byte("kv")).Get([]byte("k"))...)
		return nil
	}); err != nil {
		return "Open ok, then View: " + err.Error()
	}
	return fmt.Sprintf("Open ok, a key written and read back (%q)", got)
}
