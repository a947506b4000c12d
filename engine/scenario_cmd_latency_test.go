package engine_test

import (
	"github.com/seedfall/seedfall/engine"
)

// latency NODE D for DUR: adds D to every link of NODE for DUR.
func scLatency(b *scBuild, st *scStep, f engine.Fault) error {
	if len(st.args) != 4 || st.args[2] != "for" {
		return b.errorf(st, "want latency NODE D for DUR")
	}
	d, err := b.dur(st, st.args[1])
	if err != nil {
		return err
	}
	length, err := b.dur(st, st.args[3])
	if err != nil {
		return err
	}
	f.Node, f.LatencyNS, f.DurationNS = st.args[0], int64(d), int64(length)
	b.add(f)
	return nil
}
