package engine_test

import (
	"github.com/seedfall/seedfall/engine"
)

// strict_dirs: the config's strict_dirs, namespace changes are durable only once their
// directory is synced.
func scStrictDirs(b *scBuild, st *scStep, _ engine.Fault) error {
	if err := b.nargs(st, 0, "strict_dirs"); err != nil {
		return err
	}
	b.sc.strict = true
	return nil
}
