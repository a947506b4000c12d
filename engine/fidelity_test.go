package engine_test

// Tests of engine fidelity fixes: max_faults 0, clock skew over long timers, panic
// failure reasons and signatures, the linearizability budget, cause futures under a
// given plan.

import (
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// TestMaxFaultsZeroMeansNone: an explicit "max_faults": 0 generates no faults at all,
// while leaving it out keeps the default cap (64) and a small cap is honoured.
func TestMaxFaultsZeroMeansNone(t *testing.T) {
	t.Parallel()
	nodes := []string{basicNode("server", "sleep-forever"), basicNode("client", "idle", "5s")}
	for _, tc := range []struct {
		name, knob string
		lo, hi     int
	}{
		{"absent", ``, 10, 64},
		{"zero", `, "max_faults": 0`, 0, 0},
		{"three", `, "max_faults": 3`, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := basicConfig(`"horizon": "10s", "faults": {"crash_per_sec": 4, "crash_mid_op": 0, "pause_per_sec": 2`+tc.knob+`}`, nodes...)
			s := prepared(t, "maxfaults-"+tc.name+".json", cfg)
			if tc.knob != "" {
				want := map[string]int{"zero": 0, "three": 3}[tc.name]
				if got := s.Config().Faults.MaxFaults; got == nil || *got != want {
					t.Fatalf("parsed max_faults %v, want %d", got, want)
				}
			}
			for seed := uint64(1); seed <= 3; seed++ {
				r := runSeed(t, s, seed, nil)
				if n := len(r.Faults); n < tc.lo || n > tc.hi {
					t.Errorf("seed %d: %d faults applied, want %d to %d:\n%s", seed, n, tc.lo, tc.hi, traceText(r))
				}
			}
		})
	}
	if _, err := engine.ParseConfig([]byte(`{"workload": {"pkg": "./c"}, "faults": {"max_faults": -1}}`)); err == nil {
		t.Error("max_faults -1 accepted")
	}
}
