package srcedit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSeries(t *testing.T) {
	for v, want := range map[string]string{
		"go1.26.8": "go1.26", "go1.27": "go1.27", "go1.27rc1": "go1.27", "go1.100.2": "go1.100",
		"devel go1.28-abcdef": "", "go2.0": "", "": "", "go1.": "",
	} {
		if got := Series(v); got != want {
			t.Errorf("Series(%q) = %q, want %q", v, got, want)
		}
	}
}

// TestVariants: a release that a variant names gets only that variant; any other
// release tries them in order; an edit none of whose variants fits is an *Error naming
// the overlay, the file, the edit and the version.
func TestVariants(t *testing.T) {
	f := File{Path: "src/x/x.go", Edits: []Edit{
		{What: "rename f", Variants: []Variant{
			{Go: []string{"go1.26"}, Anchor: "func f() {", With: "func g() {"},
			{Go: []string{"go1.27"}, Anchor: "func f(ctx) {", With: "func g(ctx) {"},
		}},
		Replace("tag", "package x\n", "package x // edited\n"),
	}}
	old, new := []byte("package x\nfunc f() {}\n"), []byte("package x\nfunc f(ctx) {}\n")
	for _, tc := range []struct {
		version string
		src     []byte
		want    string // "" for an error
	}{
		{"go1.26.8", old, "package x // edited\nfunc g() {}\n"},
		{"go1.27.3", new, "package x // edited\nfunc g(ctx) {}\n"},
		{"go1.27.3", old, ""}, // go1.27's variant only: go1.26's code is not taken for it
		{"go1.28.0", new, "package x // edited\nfunc g(ctx) {}\n"},
		{"go1.28.0", old, "package x // edited\nfunc g() {}\n"},
		{"", new, "package x // edited\nfunc g(ctx) {}\n"},
		{"go1.28.0", []byte("package x\nfunc h() {}\n"), ""},
		{"go1.26.1", []byte("package x\nfunc f() {}\nfunc f() {}\n"), ""}, // twice is not once
	} {
		got, err := Apply("test overlay", "/goroot", tc.version, f, tc.src)
		if tc.want == "" {
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("%s on %q: %q, %v; want an *Error", tc.version, tc.src, got, err)
				continue
			}
			for _, w := range []string{"test overlay: ", `"rename f"`, "src/x/x.go", "/goroot"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.version != "" && !strings.Contains(err.Error(), tc.version) {
				t.Errorf("error %q does not name %s", err, tc.version)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s on %q: %q, %v; want %q", tc.version, tc.src, got, err, tc.want)
		}
	}
}

func TestCheckToolchain(t *testing.T) {
	root := t.TempDir()
	if v, err := CheckToolchain("o", root); v != "" || err != nil {
		t.Errorf("no VERSION: %q, %v", v, err)
	}
	for v, ok := range map[string]bool{"go1.25.9": false, "go1.26.0": true, "go1.27.3": true, "go1.30rc1": true, "devel +abc": true} {
		if err := os.WriteFile(filepath.Join(root, "VERSION"), []byte(v+"\ntime x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := CheckToolchain("o", root)
		if got != v || (err == nil) != ok {
			t.Errorf("%s: %q, %v", v, got, err)
		}
	}
}

func TestFingerprint(t *testing.T) {
	a := []File{{Path: "p", Edits: []Edit{Replace("w", "a", "b")}}}
	b := []File{{Path: "p", Edits: []Edit{Replace("w", "a", "c")}}}
	c := []File{{Path: "p", Edits: []Edit{{What: "w", Variants: []Variant{{Go: []string{"go1.27"}, Anchor: "a", With: "b"}}}}}}
	if Fingerprint(a) == Fingerprint(b) || Fingerprint(a) == Fingerprint(c) || Fingerprint(a) != Fingerprint(a) {
		t.Fatal("Fingerprint does not tell edits apart")
	}
}
