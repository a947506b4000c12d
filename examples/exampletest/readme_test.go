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
	})
	if data, _ := os.ReadFile(kept); string(data) != "kept" {
		t.Errorf("kept.json is %q after the command's test, want it restored", data)
	}
	if _, err := os.Stat(made); !os.IsNotExist(err) {
		t.Errorf("made.json is still there: %v", err)
	}
}
