// Command v2broken is a broken second release of the upgrade example's server: it
// writes format 2 but forgot how to read format 1, so it cannot open a log v1 wrote.
package main

import "github.com/seedfall/seedfall/examples/upgrade/kvfile"

func main() { kvfile.Main("v2broken", kvfile.Options{Reads: []int{2}, Write: 2}) }
