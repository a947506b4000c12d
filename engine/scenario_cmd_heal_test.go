package engine_test

import (
	"time"

	"github.com/seedfall/seedfall/engine"
)

// heal A: heals A's partition now.
func scHeal(b *scBuild, st *scStep, _ engine.Fault) error {
	if err := b.nargs(st, 1, "heal A"); err != nil {
		return err
	}
	k, ok := b.sc.open["partition "+st.args[0]]
	if !ok || b.now == time.Duration(b.sc.plan.Faults[k].AtNS) {
		return b.errorf(st, "%s is not partitioned before now", st.args[0])
	}
	b.sc.plan.Faults[k].DurationNS = int64(b.now) - b.sc.plan.Faults[k].AtNS
	delete(b.sc.open, "partition "+st.args[0])
	return nil
}
