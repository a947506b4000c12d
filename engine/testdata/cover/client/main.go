// Command client is the workload of the coverage tests: it waits, then passes.
package main

import "time"

func main() { time.Sleep(2 * time.Second) }
