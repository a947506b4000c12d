// Command client is kvcheck's workload.
package main

import "github.com/seedfall/seedfall/examples/kvcheck"

func main() { kvcheck.Main() }
