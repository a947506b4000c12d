// Command soak is the workload of the soak test (cmd/seedfall/soak_test.go): on each
// seed it picks one way to end, from the seed alone, so that the test can compute
// every seed's expected outcome with the same choice function:
//
//	pass   exit 0
//	panic  panic (workload-exit failure)
//	spin   loop without host calls (watchdog)
//	flood  write far past the output limit, then exit 0 (pass)
//	alloc  allocate without bound (out of memory: workload-exit failure)
//	exit1  exit 1 (workload-exit failure)
//	hang   wait on a socket nobody connects to (liveness failure at the horizon)
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/sim"
)

// kinds and pick must match the soak test's copies.
var kinds = []string{"pass", "panic", "spin", "flood", "alloc", "exit1", "hang"}

// pick is splitmix64 of the seed, modulo the number of kinds.
func pick(seed uint64) string {
	z := seed + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return kinds[z%uint64(len(kinds))]
}

func main() {
	seed, err := strconv.ParseUint(os.Getenv("SEEDFALL_SEED"), 10, 64)
	if err != nil {
		fmt.Println("soak: SEEDFALL_SEED:", err)
		os.Exit(3)
	}
	kind := pick(seed)
	fmt.Println("soak:", kind)
	switch kind {
	case "pass":
	case "panic":
		panic("soak: panic on purpose")
	case "spin":
		spin()
	case "flood":
		w := bufio.NewWriterSize(os.Stdout, 64<<10)
		line := strings.Repeat("x", 100)
		for i := range 20000 { // 2 MB, twice the default output limit
			fmt.Fprintf(w, "flood %d %s\n", i, line)
		}
		w.Flush()
	case "alloc":
		var keep [][]byte
		for i := 0; ; i++ {
			b := make([]byte, 1<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = byte(i)
			}
			keep = append(keep, b)
		}
	case "exit1":
		fmt.Println("soak: exiting with 1")
		os.Exit(1)
	case "hang":
		ln, err := sim.Listen("tcp", ":9")
		if err != nil {
			fmt.Println("soak: listen:", err)
			os.Exit(3)
		}
		fmt.Println("soak: waiting for a connection")
		ln.Accept()
		fmt.Println("soak: accepted")
	}
}

//go:noinline
func spin() {
	for {
	}
}
