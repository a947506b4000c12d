package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// wedgeConfig is the wedge guest's world: a server whose restart forgets to listen
// (unless recover) and a client that retries a refused dial forever.
func wedgeConfig(extra string, recover bool) string {
	srv := `{"name": "server", "pkg": "./guests/wedge", "args": ["server"]}`
	if recover {
		srv = `{"name": "server", "pkg": "./guests/wedge", "args": ["server", "-recover"]}`
	}
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf(`{"nodes": [%s], "workload": {"name": "client", "pkg": "./guests/wedge", "args": ["client", "-n", "100"]}, "horizon": "20s"%s}`, srv, extra)
}

// oneCrash is a plan with one crash of the server at 500ms, restarted 200ms later.
var oneCrash = &engine.FaultPlan{Faults: []engine.Fault{{AtNS: int64(500 * time.Millisecond), Kind: engine.FaultCrash, Node: "server", RestartNS: int64(200 * time.Millisecond)}}}

// TestLivenessAtHorizon: a workload that wedges (after a crash, it retries a dial the
// restarted server never answers) is a liveness failure at the horizon, with the
// workload's last output in its reason, one signature on every seed, and the same trace
// as under "count", which counts it as "horizon" instead.
func TestLivenessAtHorizon(t *testing.T) {
	t.Parallel()
	s := prepared(t, "liveness-horizon.json", wedgeConfig(`"faults": {"crash_per_sec": 2, "crash_mid_op": 0}`, false))
	counted := prepared(t, "liveness-horizon-count.json", wedgeConfig(`"faults": {"crash_per_sec": 2, "crash_mid_op": 0}, "liveness": {"horizon": "count"}`, false))
	sigs := map[string][]uint64{}
	for seed := uint64(1); seed <= 4; seed++ {
		r := runSeed(t, s, seed, nil)
		if r.Verdict != engine.VerdictFail || r.Failure == nil || r.Failure.Kind != engine.KindLiveness {
			t.Fatalf("seed %d: verdict %s failure %+v, want a liveness failure\n%s", seed, r.Verdict, r.Failure, lastLines(r, 10))
		}
		f := r.Failure
		if !r.Failed() || f.AtNS != int64(20*time.Second) || r.EndNS != f.AtNS || f.Node != "client#1" {
			t.Errorf("seed %d: failure at %s by %q (failed %v), want client#1 at the 20s horizon", seed, time.Duration(f.AtNS).String(), f.Node, r.Failed())
		}
		if !strings.HasPrefix(f.Reason, "client#1 had not finished at the horizon 20s, waiting with a timer pending; its last output: dial: ") ||
			!strings.HasSuffix(f.Reason, "Connection refused; retrying") || !strings.HasPrefix(f.LastOutput, "dial: ") {
			t.Errorf("seed %d: reason %q, last output %q", seed, f.Reason, f.LastOutput)
		}
		if len(r.Faults) == 0 || r.Faults[0].Kind != engine.FaultCrash {
			t.Errorf("seed %d: faults %v, want the crash that wedged it", seed, r.Faults)
		}
		sigs[f.Signature] = append(sigs[f.Signature], seed)
		// The policy does not touch the trace: "count" runs the same seed identically.
		c := runSeed(t, counted, seed, nil)
		if c.Verdict != engine.VerdictHorizon || c.Failure != nil || c.Failed() {
			t.Errorf("seed %d under count: verdict %s failure %v, want horizon", seed, c.Verdict, c.Failure)
		}
		if c.TraceHash != r.TraceHash || c.TraceLines != r.TraceLines {
			t.Errorf("seed %d: trace %s (%d lines) under count, %s (%d lines) under fail", seed, c.TraceHash, c.TraceLines, r.TraceHash, r.TraceLines)
		}
	}
	if len(sigs) != 1 {
		t.Errorf("one stall gave %d signatures: %v", len(sigs), sigs)
	}
}

// TestLivenessNegativeControl: the same world whose server recovers properly is not
// flagged, with or without a quiet period, and the stall is not flagged without the
// fault that causes it.
func TestLivenessNegativeControl(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, config string
		plan         *engine.FaultPlan
	}{
		{"recovering server", wedgeConfig(`"faults": {"crash_per_sec": 0.5, "crash_mid_op": 0}`, true), nil},
		{"recovering server, quiet period", wedgeConfig(`"liveness": {"quiet": "5s"}`, true), oneCrash},
		{"no fault", wedgeConfig(``, false), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := prepared(t, "liveness-neg-"+strings.ReplaceAll(tc.name, " ", "-")+".json", tc.config)
			for seed := uint64(1); seed <= 3; seed++ {
				r := runSeed(t, s, seed, tc.plan)
				if r.Verdict != engine.VerdictPass || r.Failure != nil {
					t.Fatalf("seed %d: verdict %s failure %+v, want pass\n%s", seed, r.Verdict, r.Failure, lastLines(r, 10))
				}
				if l, _ := traceLine(r, "done: 100 requests answered"); l == "" {
					t.Errorf("seed %d: the workload did not finish its work:\n%s", seed, lastLines(r, 10))
				}
			}
		})
	}
}

// TestLivenessQuiet: with a quiet period, a wedged workload fails at the end of the
// last fault plus the quiet period, with a reason that says so and the signature of the
// same stall caught at the horizon; a workload still busy with honest work when the
// quiet period ends fails too (that is what the period asks), and one that finishes
// within it passes.
func TestLivenessQuiet(t *testing.T) {
	t.Parallel()
	s := prepared(t, "liveness-quiet.json", wedgeConfig(`"liveness": {"quiet": "3s"}`, false))
	atHorizon := prepared(t, "liveness-quiet-horizon.json", wedgeConfig(``, false))
	r := runSeed(t, s, 1, oneCrash)
	want := int64(700*time.Millisecond + 3*time.Second) // crash 500ms, restart 700ms, quiet 3s
	if r.Verdict != engine.VerdictFail || r.Failure == nil || r.Failure.Kind != engine.KindLiveness || r.Failure.AtNS != want {
		t.Fatalf("verdict %s failure %+v, want a liveness failure at %s\n%s", r.Verdict, r.Failure, time.Duration(want).String(), lastLines(r, 10))
	}
	if !strings.HasPrefix(r.Failure.Reason, "client#1 had not finished 3s after the last fault ended at 700ms (liveness.quiet), ") {
		t.Errorf("reason %q", r.Failure.Reason)
	}
	if l, _ := traceLine(r, "world FAIL client#1 had not finished 3s after the last fault"); l == "" {
		t.Errorf("the trace does not end with the failure:\n%s", lastLines(r, 5))
	}
	h := runSeed(t, atHorizon, 1, oneCrash)
	if h.Failure == nil || h.Failure.Signature != r.Failure.Signature {
		t.Errorf("the stall at the horizon has failure %+v, want signature %s", h.Failure, r.Failure.Signature)
	}
	// No fault at all: the quiet period runs from time 0. 100 requests take more than
	// 2s, so a 1s quiet period ends them; a 5s one does not.
	short := prepared(t, "liveness-quiet-short.json", wedgeConfig(`"liveness": {"quiet": "1s"}`, true))
	if r := runSeed(t, short, 1, &engine.FaultPlan{Faults: []engine.Fault{}}); r.Failure == nil || r.Failure.Kind != engine.KindLiveness || r.Failure.AtNS != int64(time.Second) ||
		!strings.Contains(r.Failure.Reason, "after the last fault ended at 0s") {
		t.Errorf("1s quiet period without faults: verdict %s failure %+v, want liveness at 1s", r.Verdict, r.Failure)
	}
	long := prepared(t, "liveness-quiet-long.json", wedgeConfig(`"liveness": {"quiet": "5s"}`, true))
	if r := runSeed(t, long, 1, &engine.FaultPlan{Faults: []engine.Fault{}}); r.Verdict != engine.VerdictPass {
		t.Errorf("5s quiet period without faults: verdict %s failure %+v, want pass", r.Verdict, r.Failure)
	}
}

// TestLivenessConfigErrors: a bad liveness field is an error naming it.
func TestLivenessConfigErrors(t *testing.T) {
	t.Parallel()
	ok := `"workload": {"name": "client", "pkg": "./client"}`
	for _, tc := range []struct{ name, extra, want string }{
		{"unknown policy", `"liveness": {"horizon": "ignore"}`, `field liveness.horizon: "ignore" is not a liveness policy (want "fail", the default, or "count")`},
		{"policy type", `"liveness": {"horizon": true}`, `field liveness.horizon: want string`},
		{"negative quiet", `"liveness": {"quiet": "-1s"}`, `field liveness.quiet: -1s is negative`},
		{"quiet not a duration", `"liveness": {"quiet": "soon"}`, `field liveness.quiet: want a duration`},
		{"quiet past the horizon", `"horizon": "10s", "liveness": {"quiet": "10s"}`, `field liveness.quiet: 10s is not shorter than the horizon 10s`},
		{"quiet past the default horizon", `"liveness": {"quiet": "2m"}`, `field liveness.quiet: 2m0s is not shorter than the horizon 1m0s`},
		{"unknown field", `"liveness": {"quite": "1s"}`, `field liveness.quite: unknown field`},
	} {
		_, err := engine.ParseConfig([]byte(`{` + ok + `, ` + tc.extra + `}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, good := range []string{`"liveness": {}`, `"liveness": {"horizon": "fail"}`, `"liveness": {"horizon": "count", "quiet": "5s"}`} {
		if _, err := engine.ParseConfig([]byte(`{` + ok + `, ` + good + `}`)); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
}

// TestLivenessShrinkAndCause: shrink reduces a liveness failure to the one crash that
// wedges it, keeping its signature, and cause explains it.
func TestLivenessShrinkAndCause(t *testing.T) {
	t.Parallel()
	s := prepared(t, "liveness-shrink.json", wedgeConfig(`"faults": {"crash_per_sec": 1, "crash_mid_op": 0, "partition_per_sec": 1, "partition_duration": "300ms"}`, false))
	var seed uint64
	for x := uint64(1); x <= 20 && seed == 0; x++ {
		if r := runSeed(t, s, x, nil); r.Failure != nil && r.Failure.Kind == engine.KindLiveness && len(r.Faults) >= 3 {
			seed = x
		}
	}
	if seed == 0 {
		t.Fatal("no seed of 1-20 wedged after 3 faults or more")
	}
	res, err := s.Shrink(context.Background(), seed, engine.ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Minimal.Failure.Kind != engine.KindLiveness || res.Minimal.Failure.Signature != res.Signature || !res.Replays {
		t.Errorf("minimal run %+v (replays %v), want the liveness signature %s", res.Minimal.Failure, res.Replays, res.Signature)
	}
	if res.After != 1 || res.Plan.Faults[0].Kind != engine.FaultCrash || res.Before < 3 {
		t.Errorf("shrunk %d faults to %v, want the one crash", res.Before, res.Plan.Faults)
	}
	cr, err := s.Cause(context.Background(), seed, engine.CauseOptions{Plan: res.Plan, Moments: 4, Futures: 4})
	if err != nil {
		t.Fatal(err)
	}
	if cr.Failure.Kind != engine.KindLiveness || cr.Jump == nil || !strings.Contains(strings.Join(cr.Jump.Faults, " "), "crash server") {
		t.Errorf("cause: failure %+v, jump %+v; want the crash as the jump", cr.Failure, cr.Jump)
	}
}

// lastLines returns the last n lines of a kept trace.
func lastLines(r *engine.Result, n int) string {
	return strings.Join(r.Trace[max(0, len(r.Trace)-n):], "\n")
}

// TestLivenessSignatureKeepsQuotes: two stalls whose last lines differ only in what
// the server answered (quoted) are two signatures; the numbers in them are not.
func TestLivenessSignatureKeepsQuotes(t *testing.T) {
	sig := func(last string) string {
		return engine.Signature(&engine.Result{Failure: &engine.Failure{Kind: engine.KindLiveness, Reason: "client#1 had not finished: " + last, LastOutput: last}})
	}
	a := sig(`server answered "ERR out of order"; retrying`)
	b := sig(`server answered "ERR bucket not found"; retrying`)
	c1 := sig(`put k17: server answered "ERR sync /data/wal/00000000000000000003: I/O error" after 250ms`)
	c2 := sig(`put k4: server answered "ERR sync /data/wal/00000000000000000011: I/O error" after 1.5s`)
	if a == b || c1 != c2 {
		t.Errorf("signatures %s %s (want different), %s %s (want equal)", a, b, c1, c2)
	}
}
