// Command client is examples/kvcheck's workload: puts and reads back keys on the server
// and fails when an acknowledged write is lost.
package main

import "github.com/seedfall/seedfall/examples/kvcheck"

func main() { kvcheck.Main() }
