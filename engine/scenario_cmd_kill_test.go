package engine_test

import (
	"github.com/seedfall/seedfall/engine"
)

// kill NODE: kills NODE's process (a process death) now; down until a restart.
func scKill(b *scBuild, st *scStep, f engine.Fault) error {
	if err := b.nargs(st, 1, "kill NODE"); err != nil {
		return err
	}
	f.Node = st.args[0]
	b.sc.open["crash "+f.Node] = len(b.sc.plan.Faults) // a kill restarts like a crash
	b.add(f)
	return nil
}
