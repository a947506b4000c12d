// Package prometheustsdb_test runs examples/prometheus-tsdb's own tests (a module of its own).
package prometheustsdb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../prometheus-tsdb") }
