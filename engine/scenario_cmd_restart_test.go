package engine_test

import (
	"time"

	"github.com/seedfall/seedfall/engine"
)

// restart NODE: restarts it now (after a crash or a kill).
func scRestart(b *scBuild, st *scStep, _ engine.Fault) error {
	if err := b.nargs(st, 1, "restart NODE"); err != nil {
		return err
	}
	k, ok := b.sc.open["crash "+st.args[0]]
	if !ok || b.now == time.Duration(b.sc.plan.Faults[k].AtNS) {
		return b.errorf(st, "%s did not crash or die before now", st.args[0])
	}
	b.sc.plan.Faults[k].RestartNS = int64(b.now) - b.sc.plan.Faults[k].AtNS
	delete(b.sc.open, "crash "+st.args[0])
	return nil
}
