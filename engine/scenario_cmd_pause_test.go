package engine_test

import (
	"github.com/seedfall/seedfall/engine"
)

// pause NODE for DUR: does not schedule NODE for DUR.
func scPause(b *scBuild, st *scStep, f engine.Fault) error {
	if len(st.args) != 3 || st.args[1] != "for" {
		return b.errorf(st, "want pause NODE for DUR")
	}
	length, err := b.dur(st, st.args[2])
	if err != nil {
		return err
	}
	f.Node, f.DurationNS = st.args[0], int64(length)
	b.add(f)
	return nil
}
