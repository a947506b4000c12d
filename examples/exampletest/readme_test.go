package exampletest

import (
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
