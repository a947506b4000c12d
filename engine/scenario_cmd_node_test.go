package engine_test

import (
	"github.com/seedfall/seedfall/engine"
)

// node NAME PKG ARGS...: a node of the system (a fault guest: ./net, ./disk, ...).
func scNode(b *scBuild, st *scStep, _ engine.Fault) error {
	if len(st.args) < 2 {
		return b.errorf(st, "want NAME PKG ARGS...")
	}
	b.sc.nodes = append(b.sc.nodes, ftNode(st.args[0], st.args[1], st.args[2:]...))
	return nil
}
