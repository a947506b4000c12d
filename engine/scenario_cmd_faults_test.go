package engine_test

import (
	"encoding/json"
	"strings"

	"github.com/seedfall/seedfall/engine"
)

// faults JSON: the config's "faults" object (latency, jitter, ...).
func scFaults(b *scBuild, st *scStep, _ engine.Fault) error {
	raw := strings.Join(st.args, " ")
	if !json.Valid([]byte(raw)) {
		return b.errorf(st, "%s is not JSON", raw)
	}
	b.sc.faults = raw
	return nil
}
