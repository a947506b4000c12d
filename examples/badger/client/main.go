// Command client is this example's workload: the shared key-value check of
// github.com/seedfall/seedfall/examples/kvcheck.
package main

import "github.com/seedfall/seedfall/examples/kvcheck"

func main() { kvcheck.Main() }
