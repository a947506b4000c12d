package engine_test

import (
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// result: nothing to build; it prints what the run did (scPrintResult).
func scResult(*scBuild, *scStep, engine.Fault) error { return nil }

// scPrintResult prints the verdict, the failure and the faults that fired (it builds nothing).
func scPrintResult(run *scRun, _ *scStep, _ time.Duration) string {
	out := []string{"verdict " + string(run.r.Verdict)}
	if run.r.Failure != nil {
		out = append(out, "failure "+run.r.Failure.Reason)
	}
	for _, f := range run.r.Faults {
		out = append(out, "fault "+f.String())
	}
	return strings.Join(out, "\n")
}
