// Package prometheustsdbcontrol_test runs examples/prometheus-tsdb's negative control
// (a patch that stops the chunk writer's sync); modules/prometheus-tsdb runs the rest.
package prometheustsdbcontrol_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) {
	exampletest.RunModule(t, "../../prometheus-tsdb", "-run", "^TestNoChunkSyncCaught$")
}
