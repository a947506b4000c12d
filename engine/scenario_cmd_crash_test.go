package engine_test

import (
	"github.com/seedfall/seedfall/engine"
)

// crash NODE: crashes NODE (idle, a power loss) now; it stays down until a restart.
func scCrash(b *scBuild, st *scStep, f engine.Fault) error {
	if err := b.nargs(st, 1, "crash NODE"); err != nil {
		return err
	}
	f.Node = st.args[0]
	b.sc.open["crash "+f.Node] = len(b.sc.plan.Faults)
	b.add(f)
	return nil
}
