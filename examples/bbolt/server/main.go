// Command server is the bbolt key-value server of this example (package boltkv) with
// go.etcd.io/bbolt v1.4.3.
package main

import "github.com/seedfall/seedfall/examples/bbolt/boltkv"

func main() { boltkv.Main() }
