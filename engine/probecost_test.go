//go:build unix

package engine_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seedfall/seedfall/internal/engineapi"
)

// TestProbeCost measures the crash-state probe alone (BENCHMARKS.md, "Issue 31: the
// probe's image hash"). It runs only with SEEDFALL_PROBE_COST=CONFIG:SEED[:OPS], OPS
// as -ops takes it ("A-B"), and prints the probe's CPU and wall time and a digest of
// the states it kept (op, kind and choices, not the image hash's value), so that two
// builds can be shown to keep the same states. Profile it with -test.cpuprofile.
// SEEDFALL_PROBE_PER_OP=1 probes as -per-op does, SEEDFALL_PROBE_NO_OWN_FAULTS=1 as
// -own-faults=false does.
func TestProbeCost(t *testing.T) {
	spec := os.Getenv("SEEDFALL_PROBE_COST")
	if spec == "" {
		t.Skip("set SEEDFALL_PROBE_COST=CONFIG:SEED[:A-B] to measure the crash-state probe")
	}
	parts := strings.Split(spec, ":")
	if len(parts) < 2 {
		t.Fatalf("SEEDFALL_PROBE_COST=%q: want CONFIG:SEED[:A-B]", spec)
	}
	seed, err := strconv.ParseUint(parts[1], 10, 64)
	if err != nil {
		t.Fatalf("SEEDFALL_PROBE_COST=%q: seed: %v", spec, err)
	}
	var opt engineapi.CrashStatesOptions
	opt.PerOp = os.Getenv("SEEDFALL_PROBE_PER_OP") != ""
	opt.NoOwnFaults = os.Getenv("SEEDFALL_PROBE_NO_OWN_FAULTS") != ""
	if len(parts) > 2 {
		a, b, _ := strings.Cut(parts[2], "-")
		opt.FromOp, _ = strconv.ParseInt(a, 10, 64)
		opt.ToOp, _ = strconv.ParseInt(b, 10, 64)
	}
	s := prepare(t, parts[0], nil)
	cpu0, wall0 := cpuNow(t), time.Now()
	pts, base, err := engineapi.CrashPoints(context.Background(), s, seed, opt)
	if err != nil {
		t.Fatal(err)
	}
	cpu, wall := cpuNow(t)-cpu0, time.Since(wall0)
	h := sha256.New()
	cands, states, equiv := 0, 0, 0
	for _, p := range pts {
		cands += p.Candidates
		equiv += p.Equivalent
		states += len(p.States)
		for _, st := range p.States {
			fmt.Fprintf(h, "%d/%d %s %v\n", p.DiskOp, p.Incarnation, st.Kind, st.State)
		}
	}
	fmt.Printf("probe %s seed %d: baseline %s, run %.1fs simulated, %d ops, %d candidates, %d distinct states (%d more equivalent to an earlier op's), states digest %x; cpu %.2fs wall %.2fs\n",
		parts[0], seed, base.Verdict, float64(base.EndNS)/1e9, len(pts), cands, states, equiv, h.Sum(nil)[:8], cpu.Seconds(), wall.Seconds())
}

func cpuNow(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
