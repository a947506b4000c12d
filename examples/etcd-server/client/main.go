// Command client is the workload (package etcdcheck) with etcd's v3.5.5 client.
package main

import "github.com/seedfall/seedfall/examples/etcd-server/etcdcheck"

func main() { etcdcheck.Main() }
