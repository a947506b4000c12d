// Package etcdserver_test runs examples/etcd-server's own tests (a module of its own),
// but its directed-fault test, which ../etcd-server-directed runs beside it.
package etcdserver_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) {
	exampletest.RunModule(t, "../../etcd-server", "-skip", "^TestDirected")
}
