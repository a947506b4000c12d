package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "project")
	for _, d := range []string{root, filepath.Join(root, "sub"), filepath.Join(base, "elsewhere")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "seedfall.json"), filepath.Join(root, "sub", "c.json"), filepath.Join(base, "secret.json"), filepath.Join(base, "elsewhere", "x.json")} {
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Symlinks: one that stays inside the root, two that leave it.
	for link, target := range map[string]string{
		filepath.Join(root, "inside.json"): filepath.Join(root, "sub", "c.json"),
		filepath.Join(root, "out.json"):    filepath.Join(base, "secret.json"),
		filepath.Join(root, "outdir"):      filepath.Join(base, "elsewhere"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	root, _ = filepath.EvalSymlinks(root)
	for _, tc := range []struct {
		name, arg string
		want      string // resolved path relative to root, or "" when refused
		err       string
	}{
		{"relative", "seedfall.json", "seedfall.json", ""},
		{"subdirectory", "sub/c.json", "sub/c.json", ""},
		{"dot segments that stay inside", "sub/../seedfall.json", "seedfall.json", ""},
		{"absolute inside", filepath.Join(root, "sub", "c.json"), "sub/c.json", ""},
		{"symlink inside", "inside.json", "sub/c.json", ""},
		{"parent", "../secret.json", "", "outside the working directory"},
		{"parent after a subdirectory", "sub/../../secret.json", "", "outside the working directory"},
		{"absolute outside", filepath.Join(base, "secret.json"), "", "outside the working directory"},
		{"absolute root of the filesystem", "/etc/passwd", "", "outside the working directory"},
		{"symlink to a file outside", "out.json", "", "outside the working directory"},
		{"through a symlinked directory outside", "outdir/x.json", "", "outside the working directory"},
		{"missing inside", "nope.json", "", "no such file"},
		{"missing outside", "../nope.json", "", "outside the working directory"},
		{"empty", " ", "", "path is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolve(root, "config", tc.arg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), root) {
					t.Fatalf("resolve(%q) = %q, %v; want an error naming %s and saying %q", tc.arg, got, err, root, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve(%q): %v", tc.arg, err)
			}
			if rel := display(root, got); rel != tc.want {
				t.Fatalf("resolve(%q) = %s (%s), want %s", tc.arg, got, rel, tc.want)
			}
		})
	}
}
