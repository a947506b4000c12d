package cli

import (
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// TestRetimeRecheck: the default recheck is timed from the seed's own run, which its
// later faults can make much longer than a state's plan (prometheus-wlog seed 1: 22.6s
// against 9.9s), so the recheck crash of such a plan never happens and a repair that is
// lost only at the next crash (findings.md 4) passes. A plan whose run passed before its
// recheck is run again with the recheck halfway between the restart and that run's end;
// a run that reached its recheck, failed, or has a recheck chosen by -recheck is not.
func TestRetimeRecheck(t *testing.T) {
	const (
		restart = int64(250e6)
		crashAt = int64(64e6)
	)
	pt := engineapi.CrashPoint{Node: "server", Incarnation: 1, DiskOp: 18, AtNS: crashAt,
		Where: "write /data/wal/00000000 @488+70 at tsdb/wlog/wlog.go:595"}
	st := engineapi.CrashState{Kind: "all + in flight torn at 1/1", State: []int{1, 0}}
	job := func(recheck int64) *crashJob {
		return &crashJob{pt: pt, st: st, plan: engineapi.CrashStatePlan(1, pt, st, restart, recheck)}
	}
	res := func(v engine.Verdict, end int64) *engine.Result { return &engine.Result{Verdict: v, EndNS: end} }

	// Timed from the seed's own run (ends at 22.6s): the recheck at about 11.4s.
	long := (int64(22_600e6) - crashAt - restart) / 2
	j := job(long)
	recheckAt := j.plan.Faults[len(j.plan.Faults)-1].AtNS
	// The plan's run passed at 9.9s, before it: moved to halfway to 9.9s.
	p := retimeRecheck(1, j, res(engine.VerdictPass, 9_900e6), restart, -1)
	if p == nil {
		t.Fatalf("a run that passed at 9.9s, before its recheck at %dns, was not run again", recheckAt)
	}
	if len(p.Faults) != 2 || p.Faults[0].DiskOp != 18 || p.Faults[0].Incarnation != 1 || len(p.Faults[0].CrashState) != 2 {
		t.Fatalf("retimed plan lost the systematic crash: %+v", p.Faults)
	}
	want := crashAt + restart + (9_900e6-crashAt-restart)/2
	if got := p.Faults[1]; got.AtNS != want || got.DiskOp != 0 || len(got.CrashState) != 1 || got.CrashState[0] != 0 {
		t.Fatalf("recheck %+v, want an idle power loss [0] at %dns", got, want)
	}
	if p.Faults[1].AtNS >= 9_900e6 || p.Faults[1].AtNS <= crashAt+restart {
		t.Fatalf("recheck at %dns is not between the restart and the run's end", p.Faults[1].AtNS)
	}
	// The same at the horizon.
	if retimeRecheck(1, j, res(engine.VerdictHorizon, 9_900e6), restart, -1) == nil {
		t.Fatal("a run that hit the horizon before its recheck was not run again")
	}

	// Not moved: the run reached the recheck, failed, or could not run; the recheck was
	// chosen with -recheck, or there is none; the run ended before the restart.
	for _, tc := range []struct {
		name    string
		r       *engine.Result
		recheck int64
	}{
		{"reached", res(engine.VerdictPass, recheckAt+1), -1},
		{"failed", res(engine.VerdictFail, 9_900e6), -1},
		{"error", res(engine.VerdictError, 9_900e6), -1},
		{"watchdog", res(engine.VerdictWatchdog, 9_900e6), -1},
		{"-recheck given", res(engine.VerdictPass, 9_900e6), long},
		{"ended before the restart", res(engine.VerdictPass, crashAt+restart-1), -1},
	} {
		if p := retimeRecheck(1, j, tc.r, restart, tc.recheck); p != nil {
			t.Errorf("%s: moved the recheck: %+v", tc.name, p.Faults)
		}
	}
	if p := retimeRecheck(1, job(0), res(engine.VerdictPass, 9_900e6), restart, -1); p != nil {
		t.Errorf("no recheck: one was added: %+v", p.Faults)
	}
}
