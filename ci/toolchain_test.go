package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoToolchain(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) string {
		p := filepath.Join(root, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	pinned := write("pinned/sub/seedfall.json", "{}")
	write("pinned/go.mod", "module m\n\ngo 1.26.0\n\ntoolchain go1.26.8 // pinned\n")
	plain := write("plain/seedfall.json", "{}")
	write("plain/go.mod", "module m\n\ngo 1.27\n")
	none := func(string) string { return "" }
	for _, tc := range []struct {
		config, env, want, why string
	}{
		{pinned, "", "go1.26.8", "from the toolchain line of " + filepath.Join(root, "pinned", "go.mod")},
		{plain, "", "", "the go command's choice for " + filepath.Join(root, "plain", "go.mod")},
		{pinned, "go1.27.3", "", "GOTOOLCHAIN=go1.27.3 from the environment"},
	} {
		getenv := none
		if tc.env != "" {
			getenv = func(k string) string {
				if k == "GOTOOLCHAIN" {
					return tc.env
				}
				return ""
			}
		}
		got, why, err := GoToolchain(tc.config, getenv)
		if err != nil || got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("GoToolchain(%s, GOTOOLCHAIN=%q) = %q, %q, %v; want %q, %q", tc.config, tc.env, got, why, err, tc.want, tc.why)
		}
	}
}
