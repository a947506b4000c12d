package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// TestSignatureTwoBugs: a guest with two distinct bugs (testdata/twobugs: an even key's
// PUT acknowledged before it is synced, and GETs that fail after a kill) gives exactly
// two signatures over a sweep, one per bug, although kvcheck notices the lost write in
// two places (the read-back after reconnecting, marked with sim.FailureContext, and the
// periodic check) and prints the values of different seeds with and without a padding.
// Before sim.FailureContext and the numbered-value rule, the same sweep gave four.
func TestSignatureTwoBugs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a guest and sweeps 60 seeds")
	}
	cfg, err := engine.LoadConfig(filepath.Join("testdata", "twobugs", "seedfall.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.Prepare(context.Background(), cfg, engine.PrepareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var seeds []uint64
	for i := uint64(1); i <= 60; i++ {
		seeds = append(seeds, i)
	}
	bySig := map[string][]*engine.Result{}
	lostWith, lostWithout := 0, 0
	for _, r := range s.Sweep(context.Background(), seeds, engine.SweepOptions{Workers: 2}) {
		if r.Failure == nil {
			continue
		}
		sig := engine.Signature(r)
		bySig[sig] = append(bySig[sig], r)
		if strings.Contains(r.Failure.Reason, "acknowledged write lost") {
			if r.Failure.Context != "" {
				lostWith++
			} else {
				lostWithout++
			}
		}
	}
	if len(bySig) != 2 {
		for sig, rs := range bySig {
			t.Logf("%s on %d seeds: %s", sig, len(rs), rs[0].Failure.Reason)
		}
		t.Fatalf("%d signatures, want 2 (one per bug)", len(bySig))
	}
	for sig, rs := range bySig {
		lost := strings.Contains(rs[0].Failure.Reason, "acknowledged write lost")
		for _, r := range rs {
			if strings.Contains(r.Failure.Reason, "acknowledged write lost") != lost {
				t.Errorf("%s holds both bugs: %q and %q", sig, rs[0].Failure.Reason, r.Failure.Reason)
			}
		}
	}
	// The merge is real: both places noticed the lost write, and without the context
	// rule their reasons normalize apart.
	if lostWith == 0 || lostWithout == 0 {
		t.Fatalf("lost writes noticed %d times in the read-back and %d times elsewhere: want both", lostWith, lostWithout)
	}
	a := "acknowledged write lost: k0=v80-000, server now answers \"VAL v0\" (read back after reconnecting, before the next write)"
	b := "acknowledged write lost: k3=v31.1-, server now answers \"NONE\""
	if engine.NormalizeReason(a) == engine.NormalizeReason(b) {
		t.Fatalf("%q and %q normalize alike without the context: the test shows nothing", a, b)
	}
	withCtx := &engine.Result{Failure: &engine.Failure{Kind: engine.KindWorkloadExit, Reason: a, Context: "(read back after reconnecting, before the next write)"}}
	plain := &engine.Result{Failure: &engine.Failure{Kind: engine.KindWorkloadExit, Reason: b}}
	if engine.Signature(withCtx) != engine.Signature(plain) {
		t.Errorf("one lost write, noticed in two places, retried once: %s and %s", engine.Signature(withCtx), engine.Signature(plain))
	}
}

// TestNormalizeValues: what a retried or shortened value adds is not the bug; what
// failed still is.
func TestNormalizeValues(t *testing.T) {
	same := [][2]string{
		{`lost: k0=v73-4444, now "X"`, `lost: k0=v73.1-4444, now "X"`},
		{`lost: k0=v73-4444, now "X"`, `lost: k0=v73-, now "X"`},
		{`lost: k0=v73-4444, now "X"`, `lost: k0=v144-44444444444444444444444444444...(77 bytes), now "X"`},
		{`took 1.5 units`, `took 12 units`},
		// queuecheck's messages: a number, a dash and one letter repeated, shortened.
		{`message lost: m127.0-xxxxxxxxx… (message 128 of 150)`, `message lost: m79.0-bbbbbbbbb (message 80 of 150)`},
		{`message lost: m127.0-xxxxxxxxx… (message 128 of 150)`, `message lost: m38.1-mm (message 39 of 150)`},
		{`message lost: m127.0-xxxxxxxxx… (message 128 of 150)`, `message lost: m21.0- (message 22 of 150)`},
	}
	for _, p := range same {
		if a, b := engine.NormalizeReason(p[0]), engine.NormalizeReason(p[1]); a != b {
			t.Errorf("%q -> %q and %q -> %q: want one text", p[0], a, p[1], b)
		}
	}
	apart := [][2]string{
		{`acknowledged write lost: k0=v1`, `read of acknowledged key k0 fails`},
		{`open wal: crc error`, `open wal: short read`},
		{`server-3 down`, `server down`},
		{`n3-leader stuck`, `n3-follower stuck`},
	}
	for _, p := range apart {
		if engine.NormalizeReason(p[0]) == engine.NormalizeReason(p[1]) {
			t.Errorf("%q and %q normalize alike: two failures would be one", p[0], p[1])
		}
	}
}
