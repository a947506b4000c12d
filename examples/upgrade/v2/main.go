// Command v2 is the second release of the upgrade example's server: it reads formats 1
// and 2 and writes format 2, or format 1 while KV_WRITE_FORMAT=1 says the cluster may
// still be rolled back to v1 (the fix that seedfall.downgrade.fixed.json runs).
package main

import (
	"fmt"
	"os"

	"github.com/seedfall/seedfall/examples/upgrade/kvfile"
)

func main() {
	write := 2
	switch f := os.Getenv("KV_WRITE_FORMAT"); f {
	case "", "2":
	case "1":
		write = 1
	default:
		fmt.Fprintf(os.Stderr, "server v2: KV_WRITE_FORMAT=%q: want 1 or 2\n", f)
		os.Exit(2)
	}
	kvfile.Main("v2", kvfile.Options{Reads: []int{1, 2}, Write: write})
}
