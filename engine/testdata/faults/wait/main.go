// Command wait is the workload of the fault tests whose nodes observe the faults
// themselves: it sleeps for -for (virtual time) and exits 0, which ends the run.
package main

import (
	"flag"
	"time"
)

func main() {
	d := flag.Duration("for", 2*time.Second, "how long to wait before ending the run")
	flag.Parse()
	time.Sleep(*d)
}
