package engine

import (
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
