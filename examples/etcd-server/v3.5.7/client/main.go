// Command client is the workload (package etcdcheck of examples/etcd-server) with etcd's
// v3.5.7 client.
package main

import "github.com/seedfall/seedfall/examples/etcd-server/etcdcheck"

func main() { etcdcheck.Main() }
