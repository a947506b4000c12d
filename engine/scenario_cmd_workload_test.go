package engine_test

import (
	"github.com/seedfall/seedfall/engine"
)

// workload NAME PKG ARGS...: the workload; the run ends when it exits.
func scWorkload(b *scBuild, st *scStep, _ engine.Fault) error {
	if len(st.args) < 2 {
		return b.errorf(st, "want NAME PKG ARGS...")
	}
	b.sc.workload = ftNode(st.args[0], st.args[1], st.args[2:]...)
	return nil
}
