package engine

import (
	"context"
	"os"
	"strings"
	"testing"
)

func prepareT(t *testing.T, path string, opt PrepareOptions) *Sim {
	t.Helper()
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Prepare(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestCheckReportsDivergence: a guest that reads the host clock through a side channel
// makes -check fail with the first differing trace line; the same guest with the
// channel closed (virtual clock) passes -check.
func TestCheckReportsDivergence(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		unsafe bool
		want   bool // divergence expected
	}{
		{"host clock leaks in", true, true},
		{"negative control: virtual clock", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := prepareT(t, "testdata/nondet/seedfall.json", PrepareOptions{UnsafeHostClock: tc.unsafe})
			r := s.Run(ctx, 1, RunOptions{Check: true})
			if !r.Checked {
				t.Fatal("run was not checked")
			}
			if (r.Divergence != nil) != tc.want {
				t.Fatalf("divergence = %+v, want %v", r.Divergence, tc.want)
			}
			if !tc.want {
				if r.Verdict != VerdictPass {
					t.Fatalf("verdict %s: %v", r.Verdict, r.Failure)
				}
				return
			}
			d := r.Divergence
			if d.First == d.Second || d.Line < 1 {
				t.Fatalf("bad divergence %+v", d)
			}
			if r.Verdict != VerdictFail || r.Failure.Kind != "nondeterminism" {
				t.Fatalf("verdict %s failure %+v, want a nondeterminism failure", r.Verdict, r.Failure)
			}
			if !strings.Contains(r.Failure.Reason, "differ at trace line") {
				t.Fatalf("reason %q", r.Failure.Reason)
			}
			// The lines before the divergence are identical in both runs and shown.
			if len(d.Before) == 0 || !strings.Contains(strings.Join(d.Before, "\n"), "client#1") {
				t.Fatalf("context lines %q", d.Before)
			}
		})
	}
}

// TestSignatures: one bug on many seeds gives one signature; a different bug gives
// another.
func TestSignatures(t *testing.T) {
	if testing.Short() {
		t.Skip("sweeps kvlog")
	}
	ctx := context.Background()
	buggy := prepareT(t, "../examples/kvlog/seedfall.json", PrepareOptions{})
	sigs := map[string][]uint64{}
	// Seeds 1-80 hold 7 failures; SEEDFALL_LONG sweeps 240.
	last := uint64(80)
	if os.Getenv("SEEDFALL_LONG") != "" {
		last = 240
	}
	for _, r := range buggy.Sweep(ctx, seedRange(1, last), SweepOptions{Workers: 2}) {
		if r.Failure != nil {
			sigs[r.Failure.Signature] = append(sigs[r.Failure.Signature], r.Seed)
		}
	}
	if len(sigs) != 1 {
		t.Fatalf("kvlog's recovery bug gave %d signatures, want 1: %v", len(sigs), sigs)
	}
	var lost string
	for k, seeds := range sigs {
		lost = k
		if len(seeds) < 3 {
			t.Fatalf("only %d failing seeds; want several to show they share a signature", len(seeds))
		}
	}
	// A different bug: a server that panics.
	other := &Result{Failure: &Failure{Kind: "node-exit", Reason: "server#2 crashed: exit_code(2): panic: log not found"}}
	if s := Signature(other); s == lost || s == "" {
		t.Fatalf("a panic and a lost write share signature %q", s)
	}
	// Volatile parts are normalized away.
	a := &Result{Failure: &Failure{Kind: "workload-exit", Reason: `client#1: acknowledged write lost: k22=v262, server now answers "NONE"`}}
	b := &Result{Failure: &Failure{Kind: "workload-exit", Reason: `client#3: acknowledged write lost: k7=v19, server now answers "VAL v3"`}}
	if Signature(a) != Signature(b) {
		t.Fatalf("same bug, different signatures: %s vs %s", signatureKey(a), signatureKey(b))
	}
}

func seedRange(a, b uint64) []uint64 {
	var out []uint64
	for s := a; s <= b; s++ {
		out = append(out, s)
	}
	return out
}
