// Command jumpy is the guest of the swarm tests: a node with a bug that only a run of
// wall-clock jumps reaches. Every 10ms it compares how far its wall clock moved with how
// far its monotonic clock moved; when one incarnation has seen -jumps jumps (the two
// differ by more than 50ms), it exits 1, failing the run. A crash restarts it with the
// count at zero, so frequent crashes mask the bug: only a run with many jumps and few
// crashes finds it.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	jumps := flag.Int("jumps", 4, "jumps in one incarnation that trigger the bug")
	flag.Parse()
	last := time.Now()
	seen := 0
	for {
		time.Sleep(10 * time.Millisecond)
		now := time.Now()
		d := now.Round(0).Sub(last.Round(0)) - now.Sub(last)
		if d > 50*time.Millisecond || d < -50*time.Millisecond {
			seen++
			fmt.Printf("wall clock jumped by %s (%d in this life)\n", d.Round(time.Millisecond), seen)
			if seen >= *jumps {
				fmt.Printf("BUG: %d wall-clock jumps in one life\n", seen)
				os.Exit(1)
			}
		}
		last = now
	}
}
