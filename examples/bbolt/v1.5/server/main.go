// Command server is the bbolt key-value server of examples/bbolt (package boltkv) with
// go.etcd.io/bbolt v1.5.0: this module requires it, so the build selects it.
package main

import "github.com/seedfall/seedfall/examples/bbolt/boltkv"

func main() { boltkv.Main() }
