package engine_test

import (
	"github.com/seedfall/seedfall/engine"
)

// reset NODE: resets NODE's connections now.
func scReset(b *scBuild, st *scStep, f engine.Fault) error {
	if err := b.nargs(st, 1, "reset NODE"); err != nil {
		return err
	}
	f.Node = st.args[0]
	b.add(f)
	return nil
}
