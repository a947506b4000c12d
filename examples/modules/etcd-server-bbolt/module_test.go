// Package etcdserverbbolt_test runs part of examples/etcd-server's own tests (a module of
// its own; modules/etcd-server runs the rest): v3.5.7's three members on the seed where
// v3.5.5 diverges, and bbolt's torn first write under both versions. It builds v3.5.7
// first, while modules/etcd-server builds v3.5.5: two runners that start together
// share the cold builds instead of one waiting for the other's.
package etcdserverbbolt_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) {
	exampletest.RunModule(t, "../../etcd-server", "-run", "^(TestThreeMembersFixed|TestBboltTornInit)")
}
