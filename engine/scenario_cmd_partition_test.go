package engine_test

import (
	"github.com/seedfall/seedfall/engine"
)

// partition A B... [one-way]: cuts A from B... now (both ways unless one-way), until a
// heal.
func scPartition(b *scBuild, st *scStep, f engine.Fault) error {
	if len(st.args) < 2 {
		return b.errorf(st, "want A B... [one-way]")
	}
	f.Node, f.Peers = st.args[0], st.args[1:]
	if l := len(f.Peers); f.Peers[l-1] == "one-way" {
		f.OneWay, f.Peers = true, f.Peers[:l-1]
	}
	b.sc.open["partition "+f.Node] = len(b.sc.plan.Faults)
	b.add(f)
	return nil
}
