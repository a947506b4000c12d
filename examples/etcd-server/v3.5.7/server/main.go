// Command server is one etcd v3.5.7 member (package etcdnode of examples/etcd-server):
// this module requires v3.5.7, the first release served with the defrag fix (3.5.6 has
// it too).
package main

import "github.com/seedfall/seedfall/examples/etcd-server/etcdnode"

func main() { etcdnode.Main() }
