// Command client is this example's workload: the shared key-value check of
// github.com/seedfall/seedfall/examples/kvcheck (PUT keys, remember every acknowledged
// value, read them all back across crashes and restarts).
package main

import "github.com/seedfall/seedfall/examples/kvcheck"

func main() { kvcheck.Main() }
