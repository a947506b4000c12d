// Command seedfall runs Go services deterministically on wasip1 under a simulated world
// that crashes them, loses their fsyncs and partitions their network.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
