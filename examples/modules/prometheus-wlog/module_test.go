// Package prometheuswlog_test runs examples/prometheus-wlog's own tests (a module of its own).
package prometheuswlog_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestModule(t *testing.T) { exampletest.RunModule(t, "../../prometheus-wlog") }
