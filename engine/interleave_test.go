package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// The guest of testdata/interleave has a check-then-act race across a channel handoff
// between two goroutines (see its doc). These tests build it three ways: with
// interleave (seedfall.json), without (fifo.json) and, fixed, with interleave
// (fixed.json).

const interleaveSeeds = 8

// TestInterleaveFindsGoroutineRace: interleave finds the race; Go's FIFO scheduler never
// shows it; the fixed guest passes under interleave (the negative control).
func TestInterleaveFindsGoroutineRace(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, config string
		wantFail     bool
	}{
		{"race found with interleave", "testdata/interleave/seedfall.json", true},
		{"control: FIFO scheduler never shows it", "testdata/interleave/fifo.json", false},
		{"negative control: fixed guest with interleave", "testdata/interleave/fixed.json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := prepareT(t, tc.config, PrepareOptions{})
			failed := 0
			for seed := uint64(1); seed <= interleaveSeeds; seed++ {
				r := s.Run(ctx, seed, RunOptions{})
				switch r.Verdict {
				case VerdictFail:
					if !strings.Contains(r.Failure.Reason, "account overdrawn") {
						t.Fatalf("seed %d failed for another reason: %+v", seed, r.Failure)
					}
					failed++
				case VerdictPass:
				default:
					t.Fatalf("seed %d: verdict %s: %+v", seed, r.Verdict, r.Failure)
				}
				on := !strings.Contains(tc.config, "fifo")
				if picks := r.Stats.InterleavePicks; (picks > 0) != on {
					t.Fatalf("seed %d: %d interleave picks, want picks only with interleave", seed, picks)
				}
			}
			t.Logf("%d of %d seeds failed", failed, interleaveSeeds)
			if tc.wantFail && failed == 0 {
				t.Fatalf("no seed of 1-%d found the race", interleaveSeeds)
			}
			if !tc.wantFail && failed > 0 {
				t.Fatalf("%d seeds failed, want none", failed)
			}
		})
	}
}

// TestInterleaveDeterminism: a seed replays its interleaving exactly (same trace hash,
// -check identical); different seeds interleave differently, which the FIFO scheduler
// never does; and cause's future seed re-randomizes the interleaving of a live
// incarnation.
func TestInterleaveDeterminism(t *testing.T) {
	ctx := context.Background()
	// distinct runs run(i) for i = 1..interleaveSeeds and returns the distinct
	// interleavings that the guest printed (its output lines without their times, which
	// vary with the seed for other reasons).
	distinct := func(s *Sim, run func(i uint64) (uint64, RunOptions)) map[string]bool {
		seen := map[string]bool{}
		for i := uint64(1); i <= interleaveSeeds; i++ {
			seed, opt := run(i)
			opt.Trace = true
			var out []string
			for _, line := range s.Run(ctx, seed, opt).Trace {
				if _, said, ok := strings.Cut(line, " | "); ok {
					out = append(out, said)
				}
			}
			seen[strings.Join(out, "\n")] = true
		}
		return seen
	}
	plain := func(i uint64) (uint64, RunOptions) { return i, RunOptions{} }

	s := prepareT(t, "testdata/interleave/seedfall.json", PrepareOptions{})
	for seed := uint64(1); seed <= 3; seed++ {
		a, b := s.Run(ctx, seed, RunOptions{}), s.Run(ctx, seed, RunOptions{})
		if a.TraceHash != b.TraceHash || a.Stats.InterleavePicks != b.Stats.InterleavePicks {
			t.Fatalf("seed %d ran twice: trace %s (%d picks) then %s (%d picks)", seed, a.TraceHash, a.Stats.InterleavePicks, b.TraceHash, b.Stats.InterleavePicks)
		}
		if c := s.Run(ctx, seed, RunOptions{Check: true}); !c.Checked || c.Divergence != nil {
			t.Fatalf("seed %d: -check: checked %v, divergence %+v", seed, c.Checked, c.Divergence)
		}
	}
	if h := distinct(s, plain); len(h) < 2 {
		t.Fatalf("seeds 1-%d all interleaved alike (%d distinct outputs)", interleaveSeeds, len(h))
	}
	// cause: one seed, a different future seed each time, re-randomized from t=1ns on.
	futures := distinct(s, func(i uint64) (uint64, RunOptions) {
		return 1, RunOptions{ReseedAt: 1, FutureSeed: 1000 + i}
	})
	if len(futures) < 2 {
		t.Fatalf("cause's future seeds did not re-randomize the interleaving (%d distinct outputs)", len(futures))
	}

	fifo := prepareT(t, "testdata/interleave/fifo.json", PrepareOptions{})
	if h := distinct(fifo, plain); len(h) != 1 {
		t.Fatalf("without interleave the seeds gave %d distinct outputs, want 1 (FIFO)", len(h))
	}
}

// TestInterleaveConfig: the field takes true, false or {"trace": true}; anything else is
// an error that names the field.
func TestInterleaveConfig(t *testing.T) {
	cfg := func(v string) string {
		return `{"nodes": [{"name": "n1", "pkg": "./n", "interleave": ` + v + `}], "workload": {"pkg": "./c"}}`
	}
	for _, tc := range []struct {
		name, value string
		want        Interleave
		wantErr     string
	}{
		{"true", `true`, Interleave{On: true}, ""},
		{"false", `false`, Interleave{}, ""},
		{"object", `{"trace": true}`, Interleave{On: true, Trace: true}, ""},
		{"empty object", `{}`, Interleave{On: true}, ""},
		{"file ops", `{"file_ops": true}`, Interleave{On: true, FileOps: true}, ""},
		{"both", `{"trace": true, "file_ops": true}`, Interleave{On: true, Trace: true, FileOps: true}, ""},
		{"string", `"yes"`, Interleave{}, `field nodes.interleave: want true, false or an object such as {"trace": true}`},
		{"unknown field", `{"yield": true}`, Interleave{}, "field nodes.interleave"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(cfg(tc.value)))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseConfig = %v, want an error naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Nodes[0].Interleave; got != tc.want {
				t.Fatalf("interleave = %+v, want %+v", got, tc.want)
			}
			// It round-trips through JSON.
			raw, err := json.Marshal(c.Nodes[0])
			if err != nil {
				t.Fatal(err)
			}
			var back NodeConfig
			if err := json.Unmarshal(raw, &back); err != nil || back.Interleave != tc.want {
				t.Fatalf("round trip %s = %+v, %v", raw, back.Interleave, err)
			}
		})
	}
}

// TestInterleaveFileOps: the guest of testdata/interleave/fileops acknowledges each
// record before its fsync returned (a commit loop that answers first, then syncs). On
// Linux the acknowledger can run while the writer is inside fsync(2); on wasip1 the
// syscall runs without a switch, so plain interleave never shows it, and file_ops does.
// The fixed guest (acknowledge after the fsync) passes with file_ops: the negative
// control.
func TestInterleaveFileOps(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		config   string
		wantFail int // seeds of 1-interleaveSeeds that fail
	}{
		{"testdata/interleave/fileops.json", interleaveSeeds},
		{"testdata/interleave/fileops.plain.json", 0},
		{"testdata/interleave/fileops.fixed.json", 0},
		// Path operations (issue 49): a record acknowledged before the rename that
		// publishes it returned; the fixed guest hands it over after the rename.
		{"testdata/interleave/pathops.json", interleaveSeeds},
		{"testdata/interleave/pathops.fixed.json", 0},
	} {
		t.Run(tc.config, func(t *testing.T) {
			s := prepareT(t, tc.config, PrepareOptions{})
			failed := 0
			for seed := uint64(1); seed <= interleaveSeeds; seed++ {
				r := s.Run(ctx, seed, RunOptions{})
				switch {
				case r.Verdict == VerdictFail && (strings.Contains(r.Failure.Reason, "acknowledged before its fsync returned") || strings.Contains(r.Failure.Reason, "acknowledged before its rename returned")):
					failed++
				case r.Verdict != VerdictPass:
					t.Fatalf("seed %d: verdict %s: %+v", seed, r.Verdict, r.Failure)
				}
			}
			if failed != tc.wantFail {
				t.Fatalf("%d of seeds 1-%d failed, want %d", failed, interleaveSeeds, tc.wantFail)
			}
		})
	}
}

// TestInterleaveTrace: the trace shows no choice unless asked; with "trace" it shows
// each one.
func TestInterleaveTrace(t *testing.T) {
	ctx := context.Background()
	count := func(config string) (lines int, picks int64) {
		s := prepareT(t, config, PrepareOptions{})
		r := s.Run(ctx, 1, RunOptions{Trace: true})
		for _, line := range r.Trace {
			if strings.Contains(line, " client#1 interleave ") {
				lines++
			}
		}
		return lines, r.Stats.InterleavePicks
	}
	if lines, picks := count("testdata/interleave/seedfall.json"); lines != 0 || picks == 0 {
		t.Fatalf("without trace: %d interleave lines, %d picks; want none and some", lines, picks)
	}
	if lines, picks := count("testdata/interleave/trace.json"); lines == 0 || int64(lines) != picks {
		t.Fatalf("with trace: %d interleave lines for %d picks", lines, picks)
	}
}
