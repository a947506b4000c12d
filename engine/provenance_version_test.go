package engine

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestVersionFrom: a binary installed at a tag or from a checkout records that version
// or revision, never a bare "devel"; one that recorded neither is told apart by a hash
// of its executable.
func TestVersionFrom(t *testing.T) {
	exe := func() string { return "0123456789ab" }
	noExe := func() string { return "" }
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		exe  func() string
		want string
	}{
		{"tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, exe, "v1.2.3"},
		{"checkout pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201210000-b33780212345+dirty"}}, exe, "v0.0.0-20261201210000-b33780212345+dirty"},
		{"vcs revision only", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs.revision", "b337802d0c0ffee0", "vcs.modified", "true")}, exe, "devel-b337802d0c0f+dirty"},
		{"nothing recorded", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, exe, "devel+exe-0123456789ab"},
		{"no build info", nil, exe, "devel+exe-0123456789ab"},
		{"unreadable executable", nil, noExe, "devel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionFrom(tc.bi, tc.exe); got != tc.want {
				t.Errorf("versionFrom = %q, want %q", got, tc.want)
			}
		})
	}
	if v := Version(); v == "devel" || v == "" {
		t.Errorf("Version() = %q in a test binary, want a revision or an executable hash", v)
	}
}

// TestProvenanceConfigFrom: a results file records the config as given and the
// directory it was given in, so a report made from another directory names the config
// by a path that works there; plans drop that directory and record the config
// relative to themselves.
func TestProvenanceConfigFrom(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "repo", "examples", "kvlog"), 0o755)
	os.WriteFile(filepath.Join(root, "repo", "examples", "kvlog", "seedfall.json"), []byte("{}"), 0o644)
	p := &Provenance{Config: "examples/kvlog/seedfall.json", WorkDir: filepath.Join(root, "repo")}
	for cwd, want := range map[string]string{
		filepath.Join(root, "repo"):        filepath.FromSlash("examples/kvlog/seedfall.json"),
		filepath.Join(root, "elsewhere"):   filepath.FromSlash("../repo/examples/kvlog/seedfall.json"),
		filepath.Join(root, "repo", "cmd"): filepath.FromSlash("../examples/kvlog/seedfall.json"),
	} {
		if got := p.ConfigFrom(cwd); got != want {
			t.Errorf("from %s: %q, want %q", cwd, got, want)
		}
	}
	gone := &Provenance{Config: "examples/kvlog/seedfall.json", WorkDir: filepath.Join(root, "other-machine")}
	if got := gone.ConfigFrom(root); got != "examples/kvlog/seedfall.json" {
		t.Errorf("a config not on this machine: %q, want it as recorded", got)
	}
	plan := p.ForPlan(filepath.Join(root, "repo", "examples", "kvlog", "x.faults.json"))
	if plan.WorkDir != "" || plan.Config != "seedfall.json" {
		t.Errorf("ForPlan kept the working directory or lost the config: %+v", plan)
	}
}
