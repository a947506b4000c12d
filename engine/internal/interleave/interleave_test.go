package interleave

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGOROOT writes a GOROOT with a VERSION file and, if proc is not nil, a
// src/runtime/proc.go.
func fakeGOROOT(t *testing.T, version string, proc []byte) string {
	t.Helper()
	root := t.TempDir()
	if version != "" {
		if err := os.WriteFile(filepath.Join(root, "VERSION"), []byte(version+"\ntime 2026-01-01T00:00:00Z\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if proc != nil {
		p := filepath.Join(root, filepath.FromSlash(ReplacedFile))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, proc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// realProc is the building toolchain's runtime/proc.go.
func realProc(t *testing.T) (goroot string, src []byte) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot = strings.TrimSpace(string(out))
	src, err = os.ReadFile(filepath.Join(goroot, filepath.FromSlash(ReplacedFile)))
	if err != nil {
		t.Fatal(err)
	}
	return goroot, src
}

// TestWriteOverlay: the toolchain that runs the tests (the one seedfall supports) gets
// a patched proc.go whose runqget calls seedfallInterleave, and the added file.
func TestWriteOverlay(t *testing.T) {
	goroot, src := realProc(t)
	v, err := Version(goroot)
	if err != nil || !supported(v) {
		t.Skipf("the test toolchain (%q, %v) is not %s", v, err, GoVersion)
	}
	files, err := WriteOverlay(t.TempDir(), goroot, false)
	if err != nil {
		t.Fatal(err)
	}
	procRepl := files[filepath.Join(goroot, filepath.FromSlash(ReplacedFile))]
	addRepl := files[filepath.Join(goroot, filepath.FromSlash(AddedFile))]
	if len(files) != 2 || procRepl == "" || addRepl == "" {
		t.Fatalf("overlay entries %v", files)
	}
	patched, err := os.ReadFile(procRepl)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(patched), "seedfallInterleave(pp, h, t)"); n != 1 {
		t.Fatalf("patched proc.go calls seedfallInterleave %d times", n)
	}
	if n := strings.Count(string(patched), "seedfallInterleaveList(&list)"); n != 2 {
		t.Fatalf("patched proc.go calls seedfallInterleaveList %d times, want 2 (both netpolls)", n)
	}
	// Nothing but the edit and the header changed.
	body := string(patched[strings.Index(string(patched), "// Copyright"):])
	got := body
	for _, e := range edits {
		got = strings.Replace(got, e.with, e.anchor, 1)
	}
	if got != string(src) {
		t.Fatal("the patched proc.go differs from the toolchain's by more than the edit")
	}
	added, err := os.ReadFile(addRepl)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(added), "//go:wasmimport seedfall "+ImportPick) {
		t.Fatalf("the added file does not import seedfall.%s", ImportPick)
	}
}

// TestWriteOverlayFileOps: with fileOps the overlay also replaces fd_mutex.go, whose
// incref, readLock and writeLock first call seedfallFileOp, and adds the internal/poll
// file that declares it; the fingerprint differs, so such a build is cached apart.
func TestWriteOverlayFileOps(t *testing.T) {
	goroot, _ := realProc(t)
	v, err := Version(goroot)
	if err != nil || !supported(v) {
		t.Skipf("the test toolchain (%q, %v) is not %s", v, err, GoVersion)
	}
	files, err := WriteOverlay(t.TempDir(), goroot, true)
	if err != nil {
		t.Fatal(err)
	}
	pollRepl := files[filepath.Join(goroot, filepath.FromSlash(PollFile))]
	pollAdd := files[filepath.Join(goroot, filepath.FromSlash(PollAddedFile))]
	if len(files) != 4 || pollRepl == "" || pollAdd == "" {
		t.Fatalf("overlay entries %v", files)
	}
	patched, err := os.ReadFile(pollRepl)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(patched), "seedfallFileOp(fd.isFile)"); n != 3 {
		t.Fatalf("patched fd_mutex.go calls seedfallFileOp %d times, want 3", n)
	}
	added, err := os.ReadFile(pollAdd)
	if err != nil || !strings.Contains(string(added), "func runtime_seedfallFileOp()") {
		t.Fatalf("the added internal/poll file does not declare runtime_seedfallFileOp (%v)", err)
	}
	if Fingerprint(true) == Fingerprint(false) {
		t.Fatal("the fingerprint does not tell file_ops builds apart")
	}
	// An fd_mutex.go the edits do not fit is refused, naming the file.
	if _, err := patch([]byte("package poll\n"), PollFile, pollEdits, goroot, v); err == nil || !strings.Contains(err.Error(), PollFile) {
		t.Fatalf("patch of a foreign fd_mutex.go = %v, want an error naming %s", err, PollFile)
	}
}

// TestUnsupportedGo: a toolchain of another series, one without a VERSION, or a proc.go
// the edit does not fit gets a *VersionError that names the versions; the build never
// goes on with an unpatched runtime.
func TestUnsupportedGo(t *testing.T) {
	_, src := realProc(t)
	for _, tc := range []struct {
		name, version string
		proc          []byte
		want          []string
	}{
		{"another series", "go1.27.0", src, []string{"supports go1.26 only", "is go1.27.0", "another release series"}},
		{"an older series", "go1.25.4", src, []string{"is go1.25.4"}},
		{"no VERSION file", "", src, []string{"an unknown version", "no readable VERSION file"}},
		{"proc.go changed in a patch release", "go1.26.99", []byte("package runtime\n\nfunc runqget() {}\n"),
			[]string{"is go1.26.99", "src/runtime/proc.go", "occurs 0 times, want once"}},
		{"no proc.go", "go1.26.1", nil, []string{"cannot read src/runtime/proc.go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeGOROOT(t, tc.version, tc.proc)
			dir := t.TempDir()
			files, err := WriteOverlay(dir, root, false)
			var ve *VersionError
			if !errors.As(err, &ve) {
				t.Fatalf("WriteOverlay = %v, %v; want a *VersionError", files, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("wrote %d files for an unsupported toolchain", len(ents))
			}
		})
	}
	// Negative control: the same fake GOROOT with a supported version and the real
	// proc.go is accepted.
	if _, err := WriteOverlay(t.TempDir(), fakeGOROOT(t, "go1.26.3", src), false); err != nil {
		t.Fatalf("a go1.26 GOROOT with the real proc.go: %v", err)
	}
}

func TestVerifyBuild(t *testing.T) {
	if err := VerifyBuild([]string{"wasi_snapshot_preview1.fd_write", "seedfall." + ImportPick}); err != nil {
		t.Fatal(err)
	}
	err := VerifyBuild([]string{"wasi_snapshot_preview1.fd_write", "seedfall.sock_dial"})
	if err == nil || !strings.Contains(err.Error(), "not applied") {
		t.Fatalf("a module without sched_pick: %v", err)
	}
}
