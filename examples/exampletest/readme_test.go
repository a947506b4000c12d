package exampletest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSplitCommandDropsComment: a README's trailing shell comment is not an argument
// (diskv's "$ seedfall run … -q     # 1-300: FAIL 289 of 300" ran with "#" as one); a
// quoted "#" is.
func TestSplitCommandDropsComment(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"seedfall run -c x.json -seeds 1-100 -q     # 1-300: FAIL 289 of 300", []string{"seedfall", "run", "-c", "x.json", "-seeds", "1-100", "-q"}},
		{"seedfall test ./sim -run 'a #b' -seed 2", []string{"seedfall", "test", "./sim", "-run", "a #b", "-seed", "2"}},
	} {
		if got := splitCommand(c.in); !slices.Equal(got, c.want) {
			t.Errorf("splitCommand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestBeforePipe: a quoted pipeline runs seedfall alone (buntdb's "$ seedfall replay …
// | grep 'start (build'" ran with "|" as an argument); a quoted "|" is an argument.
func TestBeforePipe(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"seedfall replay -c r.json -seed 1 | grep 'start (build'", []string{"seedfall", "replay", "-c", "r.json", "-seed", "1"}},
		{"seedfall test ./sim -run 'TestA|TestB' -seed 2", []string{"seedfall", "test", "./sim", "-run", "TestA|TestB", "-seed", "2"}},
	} {
		if got := beforePipe(splitCommand(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("beforePipe(splitCommand(%q)) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestNormLineKeepsVirtualTimes: wall times are left out of the comparison, virtual
// times are not (the check compared "FAIL seed 1 at t=3.851192595s" equal to a run that
// printed t=3.851062595s).
func TestNormLineKeepsVirtualTimes(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"300 seeds in 38.8s (7.7 seeds/s)", "300 seeds in 41.2s (7.3 seeds/s)", true},
		{"crashes: 192/192 states, 69 failed, 20.1 states/s, ETA 0s", "crashes: 192/192 states, 69 failed, 17.3 states/s, ETA 3s", true},
		{"crashes: 192/192 states, 69 failed, 20.1 states/s, ETA 0s", "crashes: 192/192 states, 68 failed, 20.1 states/s, ETA 0s", false},
		{"shrunk 5 -> 1 faults in 21 runs, 3.1s", "shrunk 5 -> 1 faults in 21 runs, 4.0s", true},
		{"3 vulnerable sites at 7 sites, 3 of 40 states failing, in 17s", "3 vulnerable sites at 7 sites, 3 of 40 states failing, in 8s", true},
		{"took 1m2.5s", "took 1m9.1s", true},
		{"TestCrashAfterAcknowledgedPutsFixed       ./simtest  20     0       0                  6.5s", "TestCrashAfterAcknowledgedPutsFixed       ./simtest  20     0       0                  8s    ", true},
		{"TestCrashAfterAcknowledgedPutsFixed       ./simtest  20     0       0                  6.5s", "TestCrashAfterAcknowledgedPutsFixed       ./simtest  20     1       1                  6.5s", false},
		{"built in 11.68s (1 go build, 1 unchanged), compiled in 1.89s (images 0.07s, wazero 2.03s, source locations 0.06s)", "built in 0.20s (0 go build, 2 unchanged), compiled in 2.48s (images 0.60s, wazero 1.78s, source locations 0.31s)", true},
		{"FAIL seed 1 at t=3.851192595s client#1: lost", "FAIL seed 1 at t=3.851062595s client#1: lost", false},
		{"  6.653345399s crash server, restart at 6.979014576s", "  6.653345399s crash server, restart at 6.979014577s", false},
		{"  1m2.653345399s crash server", "  1m2.653345391s crash server", false},
		{"ok seed 1: pass at t=5.597027467s, 1 fault applied", "ok seed 1: pass at t=5.597031467s, 1 fault applied", false},
	} {
		if got := normLine(c.a) == normLine(c.b); got != c.same {
			t.Errorf("normLine(%q) == normLine(%q): %v, want %v (%q, %q)", c.a, c.b, got, c.same, normLine(c.a), normLine(c.b))
		}
	}
}

// TestElidedWithDots: "..." leaves out a part of a quoted line as "…" does (docs/crashes.md
// quotes "(disk ops #4/1,#6/1,#8/1,...)").
func TestElidedWithDots(t *testing.T) {
	printed := []string{"VULNERABLE kvlog/kvstore/kvstore.go:179: 69 of 129 states fail (disk ops #4/1,#6/1,#8/1,#10/1,+52 more)"}
	if !elided("VULNERABLE kvlog/kvstore/kvstore.go:179: 69 of 129 states fail (disk ops #4/1,#6/1,#8/1,...)", printed) {
		t.Error("a quote with ... did not match the line it elides")
	}
	if elided("VULNERABLE kvlog/kvstore/kvstore.go:179: 70 of 129 states fail (disk ops #4/1,...)", printed) {
		t.Error("a quote with ... matched a line that differs outside the elided part")
	}
}

// TestKeepOutputs: a quoted command's -o file is restored after the test, and a file it
// made is removed (the README check ran `seedfall shrink -o plans/seed8.shrunk.json` and
// left fsyncgate's kept plan rewritten).
func TestKeepOutputs(t *testing.T) {
	dir := t.TempDir()
	kept, made := filepath.Join(dir, "kept.json"), filepath.Join(dir, "made.json")
	if err := os.WriteFile(kept, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("command", func(t *testing.T) {
		keepOutputs(t, dir, []string{"seedfall", "shrink", "-o", "kept.json", "-save", "made.json"})
		os.WriteFile(kept, []byte("rewritten"), 0o644)
		os.WriteFile(made, []byte("new"), 0o644)
		// seedfall crashes's directory beside the config, named by no argument
		os.MkdirAll(filepath.Join(dir, "seedfall.seed-1.crashes", "x"), 0o755)
	})
	if _, err := os.Stat(filepath.Join(dir, "seedfall.seed-1.crashes")); !os.IsNotExist(err) {
		t.Errorf("the directory the command made is still there: %v", err)
	}
	// A command run from the root that names a config elsewhere (docs/crashes.md's
	// "seedfall crashes -c examples/kvlog/seedfall.json"): what it makes beside the
	// config goes too.
	ex := filepath.Join(dir, "examples", "kv")
	os.MkdirAll(ex, 0o755)
	t.Run("from the root", func(t *testing.T) {
		keepOutputs(t, dir, []string{"seedfall", "crashes", "-c", "examples/kv/seedfall.json", "-seed", "1"})
		os.MkdirAll(filepath.Join(ex, "seedfall.seed-1.crashes"), 0o755)
	})
	if _, err := os.Stat(filepath.Join(ex, "seedfall.seed-1.crashes")); !os.IsNotExist(err) {
		t.Errorf("the directory made beside the config is still there: %v", err)
	}
	if data, _ := os.ReadFile(kept); string(data) != "kept" {
		t.Errorf("kept.json is %q after the command's test, want it restored", data)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("made.json is still there: %v", err)
	}
}
