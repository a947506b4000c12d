// Command server is one etcd v3.5.5 member (package etcdnode).
package main

import "github.com/seedfall/seedfall/examples/etcd-server/etcdnode"

func main() { etcdnode.Main() }
