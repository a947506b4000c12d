// Command v1 is the first release of the upgrade example's server: it reads and
// writes format 1.
package main

import "github.com/seedfall/seedfall/examples/upgrade/kvfile"

func main() { kvfile.Main("v1", kvfile.Options{Reads: []int{1}, Write: 1}) }
