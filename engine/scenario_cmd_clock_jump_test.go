package engine_test

import (
	"time"

	"github.com/seedfall/seedfall/engine"
)

// clock_jump NODE BY: jumps NODE's wall clock by BY now (may be negative).
func scClockJump(b *scBuild, st *scStep, f engine.Fault) error {
	if err := b.nargs(st, 2, "clock_jump NODE BY"); err != nil {
		return err
	}
	by, err := time.ParseDuration(st.args[1])
	if err != nil {
		return b.errorf(st, "%q is not a duration", st.args[1])
	}
	f.Node, f.JumpNS = st.args[0], int64(by)
	b.add(f)
	return nil
}
