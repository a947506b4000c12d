// Command guest makes host calls from known lines; goloc_test.go checks that Locate
// reports them. Lines carrying a "LOC:name" marker are the expected locations.
package main

import (
	"os"
	"sync"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	os.WriteFile("/data/a", []byte("hello"), 0o644) // LOC:writefile
	f, err := os.Create("/data/b")                  // LOC:create
	if err != nil {
		panic(err)
	}
	f.Write([]byte("x")) // LOC:write
	f.Sync()             // LOC:sync
	syncInline(f)
	deep(f, 20)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 3; i++ {
			f.Write([]byte("g"))            // LOC:gowrite
			os.Rename("/data/a", "/data/c") // LOC:rename
			os.Rename("/data/c", "/data/a") // LOC:rename2
		}
	}()
	wg.Wait()
	sim.Always(true, "guest ran", nil) // LOC:always
	f.Close()
	os.Stdout.WriteString("done\n") // LOC:stdout
}

// syncInline is small enough to be inlined into main: the inline tree must give this
// line, not main's.
func syncInline(f *os.File) { f.Sync() } // LOC:inline

//go:noinline
func deep(f *os.File, n int) {
	if n == 0 {
		f.Sync() // LOC:deep
		return
	}
	deep(f, n-1)
}
