// Package prometheustsdb_test runs examples/prometheus-tsdb's own tests (a module of its
// own) but two: its negative control, which modules/prometheus-tsdb-control runs beside
// it, and the shrunk plan of the WAL repair's hole, which modules/prometheus-tsdb-repair
// runs (each of the example's three configs is a build of Prometheus' TSDB of its own,
// too much for one package's budget from a cold cache).
package prometheustsdb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) {
	exampletest.RunModule(t, "../../prometheus-tsdb", "-skip", "^(TestNoChunkSyncCaught|TestRepairHole)$")
}
