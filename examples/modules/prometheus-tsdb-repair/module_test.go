// Package prometheustsdbrepair_test runs examples/prometheus-tsdb's shrunk plan of
// finding 4 (a WAL repair that leaves a hole), on the unmodified TSDB and on the patched
// one; modules/prometheus-tsdb runs the rest but the negative control.
package prometheustsdbrepair_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) {
	exampletest.RunModule(t, "../../prometheus-tsdb", "-run", "^TestRepairHole$")
}
