// Command client is this example's workload: examples/kvcheck/queuecheck publishes
// messages through the server, consumes some as it goes, drains the queue and checks
// that every message the server acknowledged was delivered.
package main

import "github.com/seedfall/seedfall/examples/kvcheck/queuecheck"

func main() { queuecheck.Main() }
