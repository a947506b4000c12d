package ci

import (
	"path/filepath"
	"testing"
)

// TestShrunkPlanRef: a replay command names the shrunk plan where the user can reach
// it: in Actions by the report directory's base name (the artifact unpacks so), and
// elsewhere by the directory as given, so an absolute -out stays absolute.
func TestShrunkPlanRef(t *testing.T) {
	for _, tc := range []struct {
		out     string
		actions bool
		want    string
	}{
		{"/tmp/x/seedfall-report", false, "/tmp/x/seedfall-report/faults/sig-1.json"},
		{"out/report", false, "out/report/faults/sig-1.json"},
		{"/tmp/x/seedfall-report", true, "seedfall-report/faults/sig-1.json"},
	} {
		r := &runner{in: Inputs{Out: tc.out}, env: Env{Actions: tc.actions}}
		if got := r.shrunkPlanRef("sig-1"); got != filepath.FromSlash(tc.want) {
			t.Errorf("out %s, actions %v: %s, want %s", tc.out, tc.actions, got, tc.want)
		}
	}
	if !EnvFromGetenv(func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }).Actions {
		t.Error("GITHUB_ACTIONS=true does not set Env.Actions")
	}
}
