package engine_test

import (
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// run-until T: the steps after it happen at T. The run's horizon is the last one.
func scRunUntil(b *scBuild, st *scStep, _ engine.Fault) error {
	if err := b.nargs(st, 1, "run-until T"); err != nil {
		return err
	}
	d, err := b.dur(st, st.args[0])
	if err != nil {
		return err
	}
	if d <= b.now {
		return b.errorf(st, "%s is not after %s", d, b.now)
	}
	b.now = d
	b.sc.horizon = d
	return nil
}

// scPrintRunUntil prints the trace lines after the previous run-until, up to at.
func scPrintRunUntil(run *scRun, _ *scStep, at time.Duration) string {
	var out []string
	for ; run.next < len(run.r.Trace) && lineTime(run.t, run.r.Trace[run.next]) <= at; run.next++ {
		if lineTime(run.t, run.r.Trace[run.next]) > run.prev {
			out = append(out, run.r.Trace[run.next])
		}
	}
	run.prev = at
	return strings.Join(out, "\n")
}
