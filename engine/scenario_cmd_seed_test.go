package engine_test

import (
	"strconv"

	"github.com/seedfall/seedfall/engine"
)

// seed N: the run's seed (default 1).
func scSeed(b *scBuild, st *scStep, _ engine.Fault) error {
	if err := b.nargs(st, 1, "seed N"); err != nil {
		return err
	}
	v, err := strconv.ParseUint(st.args[0], 10, 64)
	if err != nil {
		return b.errorf(st, "%q is not a seed", st.args[0])
	}
	b.sc.seed = v
	return nil
}
