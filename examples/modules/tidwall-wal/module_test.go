// Package tidwallwal_test runs examples/tidwall-wal's own tests (a module of its own).
package tidwallwal_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../tidwall-wal") }
