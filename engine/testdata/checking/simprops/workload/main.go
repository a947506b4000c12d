// Command workload exercises sim.Always, Sometimes, Reachable and Unreachable. Flags
// break an Always or reach an Unreachable on purpose.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	violate := flag.Bool("violate", false, "make an Always false")
	unreachable := flag.Bool("unreachable", false, "reach an Unreachable")
	flag.Parse()

	coin := rand.IntN(2) // seeded by the host: heads on some seeds, tails on others
	sim.Always(coin == 0 || coin == 1, "coin is 0 or 1", map[string]any{"coin": coin})
	sim.Sometimes(coin == 1, "coin came up heads", map[string]any{"coin": coin})
	sim.Sometimes(coin == 7, "coin came up seven", map[string]any{"coin": coin})
	if c, err := sim.DialTimeout("tcp", "node:7000", time.Second); err == nil {
		c.Close()
	}
	time.Sleep(10 * time.Millisecond)
	if *violate {
		x := 41 + coin
		sim.Always(x < 0, "x is negative", map[string]any{"x": x, "why": "on purpose"})
	}
	if *unreachable {
		sim.Unreachable("the unreachable branch", map[string]any{"coin": coin})
	}
	if coin == 7 {
		sim.Reachable("coin seven branch", nil)
	}
	sim.Reachable("workload finished", nil)
	fmt.Println("ok")
}
