// Package platform is seedfall's wasip1 platform layer: what Linux storage code calls
// and GOOS=wasip1 lacks (flock, mmap, msync, fdatasync, fallocate), so that a user's
// code and its dependencies build for wasip1 unmodified.
//
// It has two parts, both build inputs and nothing else:
//
//   - The syscall overlay, for every node build: a file added to the toolchain's
//     $GOROOT/src/syscall (files/syscall_seedfall_wasip1.go.txt, seedfall's own code:
//     Flock, Mmap, Munmap, Msync, Madvise, Mlock, Fdatasync, Fallocate, the LOCK_*,
//     PROT_*, MAP_*, MS_*, MADV_* constants and EWOULDBLOCK, served by the seedfall host
//     module, docs/ABI.md) and one anchored edit of syscall_wasip1.go, so that
//     Syscall(SYS_MADVISE, ...) and its kin answer as on Linux. A program that calls
//     none of them links none of it.
//   - Ports (ports.go): for a dependency that has no file for wasip1 or wasm, files
//     added to it or anchored edits of its own files (a build constraint that leaves
//     wasip1 out), keyed by module path and a version range. A build that imports a
//     package of a ported module at a version outside the range is refused with an
//     error that names the module, its version and the range.
//
// It owns those files and edits. It may not build anything (internal/build applies
// them: the GOROOT part through the build overlay, the ports through patched copies of
// the modules) or know of a run; the host side of the calls is internal/wasi's.
package platform

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seedfall/seedfall/engine/internal/srcedit"
)

// Name is how the layer names itself in errors.
const Name = "wasip1 platform layer"

//go:embed files/syscall_seedfall_wasip1.go.txt
var syscallFile []byte

// SyscallAdded is the file the layer adds to $GOROOT/src/syscall.
const SyscallAdded = "seedfall_platform_wasip1.go"

var syscallFiles = []srcedit.File{{
	Path: "src/syscall/syscall_wasip1.go",
	Edits: []srcedit.Edit{
		srcedit.Replace("Syscall: the Linux calls storage code makes by number",
			"func Syscall(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err Errno) {\n",
			"func Syscall(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err Errno) {\n"+
				"\t// seedfall: madvise, mlock, fsync, fdatasync and flock by number (seedfall_platform_wasip1.go).\n"+
				"\tif r1, r2, err, ok := seedfallSyscall(trap, a1, a2, a3); ok {\n"+
				"\t\treturn r1, r2, err\n"+
				"\t}\n"),
	},
}}

// WriteGOROOT writes the layer's files of the toolchain at goroot into dir and returns
// the build overlay's entries for them: GOROOT path to the file written. goroot must be
// the building toolchain's `go env GOROOT` (see internal/overlay on keys that name no
// GOROOT file).
func WriteGOROOT(dir, goroot string) (map[string]string, error) {
	version, err := srcedit.CheckToolchain(Name, goroot)
	if err != nil {
		return nil, err
	}
	sysDir := filepath.Join(goroot, "src", "syscall")
	if _, err := os.Stat(filepath.Join(sysDir, SyscallAdded)); err == nil {
		return nil, fmt.Errorf("%s: %s already exists in GOROOT; it would be replaced, not added", Name, filepath.Join(sysDir, SyscallAdded))
	}
	out := map[string][]byte{SyscallAdded: syscallFile}
	for _, f := range syscallFiles {
		data, err := srcedit.ReadAndApply(Name, goroot, version, f)
		if err != nil {
			return nil, err
		}
		out[filepath.Base(f.Path)] = data
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	replace := map[string]string{}
	for name, data := range out {
		dst := filepath.Join(dir, name)
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return nil, err
		}
		replace[filepath.Join(sysDir, name)] = dst
	}
	return replace, nil
}

// Fingerprint identifies the layer's content (the syscall file and edits, and every
// port), for a build cache keyed on it.
func Fingerprint() string {
	h := sha256.New()
	h.Write([]byte(srcedit.Fingerprint(syscallFiles)))
	fmt.Fprintf(h, "\n%s %d\n", SyscallAdded, len(syscallFile))
	h.Write(syscallFile)
	fmt.Fprintf(h, "%s %d\n", PersonalityVersion, len(xsysPersonality))
	h.Write(xsysPersonality)
	for _, p := range Ports {
		fmt.Fprintf(h, "port\x00%s\x00%s\x00%s\n", p.Module, p.Min, p.Below)
		for _, a := range p.Add {
			fmt.Fprintf(h, "add\x00%s\x00%d\n", a.Path, len(a.Text))
			h.Write(a.Text)
		}
		for _, e := range p.Edit {
			h.Write([]byte(srcedit.Fingerprint([]srcedit.File{e})))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
