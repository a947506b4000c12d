package interleave

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/internal/srcedit"
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

// TestWriteOverlay: the toolchain that runs the tests (.ci/run runs them on every
// supported release) gets a patched proc.go whose runqget calls seedfallInterleave, and
// the added file.
func TestWriteOverlay(t *testing.T) {
	goroot, src := realProc(t)
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
	for _, e := range procFile.Edits {
		got = strings.Replace(got, e.Variants[0].With, e.Variants[0].Anchor, 1)
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
	v, err := srcedit.Version(goroot)
	if err != nil {
		t.Fatal(err)
	}
	files, err := WriteOverlay(t.TempDir(), goroot, true)
	if err != nil {
		t.Fatal(err)
	}
	pollRepl := files[filepath.Join(goroot, filepath.FromSlash(PollFile))]
	pollAdd := files[filepath.Join(goroot, filepath.FromSlash(PollAddedFile))]
	sysRepl := files[filepath.Join(goroot, filepath.FromSlash(SyscallFile))]
	sysAdd := files[filepath.Join(goroot, filepath.FromSlash(SyscallAddedFile))]
	if len(files) != 6 || pollRepl == "" || pollAdd == "" || sysRepl == "" || sysAdd == "" {
		t.Fatalf("overlay entries %v", files)
	}
	// Path operations (issue 49): each of the seven starts with the scheduling point.
	sys, err := os.ReadFile(sysRepl)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(sys), "\tseedfallPathOp() // seedfall: interleave file_ops\n"); n != 7 {
		t.Fatalf("patched fs_wasip1.go calls seedfallPathOp %d times, want 7 (Open, Mkdir, Unlink, Rmdir, Rename, Link, Symlink)", n)
	}
	if added, err := os.ReadFile(sysAdd); err != nil || !strings.Contains(string(added), "func seedfallPathOp()") {
		t.Fatalf("the added syscall file does not declare seedfallPathOp (%v)", err)
	}
	if _, err := patch([]byte("package syscall\n"), syscallFile, goroot, v); err == nil || !strings.Contains(err.Error(), SyscallFile) {
		t.Fatalf("patch of a foreign fs_wasip1.go = %v, want an error naming %s", err, SyscallFile)
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
	if _, err := patch([]byte("package poll\n"), pollFile, goroot, v); err == nil || !strings.Contains(err.Error(), PollFile) {
		t.Fatalf("patch of a foreign fd_mutex.go = %v, want an error naming %s", err, PollFile)
	}
}

// TestReleases: the real proc.go is patched for every release from go1.26 on; a
// toolchain older than that, or a proc.go an edit does not fit, gets a *srcedit.Error
// that names the file, the edit and the version; the build never goes on with an
// unpatched runtime, and nothing is written.
func TestReleases(t *testing.T) {
	_, src := realProc(t)
	for _, v := range []string{"go1.26.3", "go1.27.0", "go1.27.3", "go1.28rc1", ""} {
		if _, err := WriteOverlay(t.TempDir(), fakeGOROOT(t, v, src), false); err != nil {
			t.Errorf("%q with the real proc.go: %v", v, err)
		}
	}
	for _, tc := range []struct {
		name, version string
		proc          []byte
		want          []string
	}{
		{"an older series", "go1.25.4", src, []string{"interleave:", "is go1.25.4", "go1.26 or later"}},
		{"proc.go changed", "go1.28.0", []byte("package runtime\n\nfunc runqget() {}\n"),
			[]string{"go1.28.0", "src/runtime/proc.go", `"runqget: let the host choose the next goroutine"`, "occurs 0 times"}},
		{"no proc.go", "go1.27.1", nil, []string{"src/runtime/proc.go of go1.27.1", "cannot read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fakeGOROOT(t, tc.version, tc.proc)
			dir := t.TempDir()
			files, err := WriteOverlay(dir, root, false)
			var se *srcedit.Error
			if !errors.As(err, &se) {
				t.Fatalf("WriteOverlay = %v, %v; want a *srcedit.Error", files, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("wrote %d files for a toolchain it refused", len(ents))
			}
		})
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
