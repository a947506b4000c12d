package engine_test

import (
	"strconv"

	"github.com/seedfall/seedfall/engine"
)

// clock_skew NODE PPM: makes NODE's clocks drift by PPM from now on.
func scClockSkew(b *scBuild, st *scStep, f engine.Fault) error {
	if err := b.nargs(st, 2, "clock_skew NODE PPM"); err != nil {
		return err
	}
	ppm, err := strconv.ParseInt(st.args[1], 10, 64)
	if err != nil {
		return b.errorf(st, "%q is not a number of ppm", st.args[1])
	}
	f.Node, f.SkewPPM = st.args[0], ppm
	b.add(f)
	return nil
}
