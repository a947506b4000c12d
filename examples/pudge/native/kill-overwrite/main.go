// Command kill-overwrite reproduces finding 23 natively, on the host, against the real
// github.com/recoilme/pudge v1.0.3 (no seedfall), with real process deaths: a child
// process overwrites one key again and again and is killed with SIGKILL at a random
// moment; the parent then opens the database and reads the key back. A process death
// loses nothing that was written (the page cache survives), so every read should be
// one of the values the child wrote. Each value is one letter repeated (the letter
// changes every write, the length is random), so a value that mixes two letters was
// never written: pudge wrote the new value over the old one in place (pudge.go:274)
// and the child died before the index record with the new size (pudge.go:282).
//
//	go run ./native/kill-overwrite            # library as released: mixed values
//	go run github.com/seedfall/seedfall/examples/nativerun \
//	    -patch patches/fix-crash-safe-update.patch ./native/kill-overwrite   # none
//
// The kill times come from a fixed seed, but when the kill lands between the two
// writes depends on the host: the count of mixed values varies from run to run.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/recoilme/pudge"
)

func main() {
	child := flag.String("child", "", "internal: the database file the child overwrites")
	trials := flag.Int("trials", 40, "number of kills")
	flag.Parse()
	if *child != "" {
		overwrite(*child)
		return
	}
	if err := run(*trials); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// overwrite writes key "k" forever: a 64-byte value once, then values of random length
// up to 64, each a repeat of the next letter, so most fit in place.
func overwrite(file string) {
	db, err := pudge.Open(file, &pudge.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := db.Set([]byte("k"), []byte(strings.Repeat("a", 64))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	r := rand.New(rand.NewPCG(1, 2))
	for i := 1; ; i++ {
		v := strings.Repeat(string(rune('a'+i%26)), 1+r.IntN(64))
		if err := db.Set([]byte("k"), []byte(v)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func run(trials int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "pudge-kill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	r := rand.New(rand.NewPCG(24, 24))
	mixed := 0
	first := ""
	for i := range trials {
		file := filepath.Join(tmp, fmt.Sprintf("db%d", i))
		cmd := exec.Command(self, "-child", file)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		buf := make([]byte, 6)
		if _, err := out.Read(buf); err != nil {
			return fmt.Errorf("child: %v", err)
		}
		time.Sleep(time.Duration(1+r.IntN(20)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		db, err := pudge.Open(file, &pudge.Config{})
		if err != nil {
			return fmt.Errorf("trial %d: open: %v", i, err)
		}
		var v []byte
		if err := db.Get([]byte("k"), &v); err != nil {
			return fmt.Errorf("trial %d: get: %v", i, err)
		}
		db.Close()
		if s := string(v); strings.Trim(s, s[:1]) != "" {
			mixed++
			if first == "" {
				first = fmt.Sprintf("trial %d: k = %q", i, s)
			}
		}
	}
	fmt.Printf("after %d kills: %d values never written\n", trials, mixed)
	if first != "" {
		fmt.Println("first:", first)
	}
	return nil
}
