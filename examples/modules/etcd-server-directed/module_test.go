// Package etcdserverdirected_test runs examples/etcd-server's directed-fault test
// (finding 32 as a test with its own faults), a package apart so that the example's
// suite stays well inside go test's timeout.
package etcdserverdirected_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) {
	exampletest.RunModule(t, "../../etcd-server", "-run", "^TestDirected")
}
