// Package platform is seedfall's wasip1 platform layer: what Linux storage code calls
// and GOOS=wasip1 lacks (flock, mmap, msync, fdatasync, fallocate), so that a user's
// code and its dependencies build for wasip1 unmodified.
//
// It has three parts, all build inputs and nothing else:
//
//   - The syscall overlay, for every node build: a file added to the toolchain's
//     $GOROOT/src/syscall (files/syscall_seedfall_wasip1.go.txt, seedfall's own code:
//     Flock, Mmap, Munmap, Msync, Madvise, Mlock, Fdatasync, Fallocate, the LOCK_*,
//     PROT_*, MAP_*, MS_*, MADV_* constants and EWOULDBLOCK, served by the seedfall host
//     module, docs/ABI.md) and one anchored edit of syscall_wasip1.go, so that
//     Syscall(SYS_MADVISE, ...) and its kin answer as on Linux. A program that calls
//     none of them links none of it.
//   - The os/signal edit, for every node build: wasip1 has no signals, and its runtime
//     waits for one by spinning, which starves the network poller once a program calls
//     signal.Notify; loop in signal_unix.go sleeps instead (signalFile).
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

// SignalAdded is the file the layer adds to $GOROOT/src/os/signal.
const SignalAdded = "seedfall_signal_wasip1.go"

// signalFile is os/signal's wait for a signal on wasip1. wasip1 has no signals, and the
// runtime's signal_recv waits for one by spinning: notetsleepg (lock_wasip1.go) calls
// sched_yield and Gosched in a loop. Once a program calls signal.Notify (lotusdb opens
// its database so; servers do at start), that goroutine is runnable forever: the
// runtime's scheduler takes it from the run queue before it polls the network, so the
// process accepts and reads nothing again, and under the simulator every turn of the
// loop is a host call. On Linux the same goroutine sleeps in the kernel until a signal
// comes. The edited loop sleeps in a timer instead, as long as a timer can: the process
// is idle when nothing else runs, and, as on Linux, is not "asleep - deadlock" for it.
const signalFile = `// Code added by seedfall's wasip1 platform layer. DO NOT EDIT.

package signal

import "time"

// seedfallWait stands in for signal_recv on wasip1, which has no signals: it sleeps
// where the runtime's version spins (see loop in signal_unix.go).
func seedfallWait() {
	for {
		time.Sleep(1<<63 - 1)
	}
}
`

var gorootFiles = []srcedit.File{{
	Path: "src/os/signal/signal_unix.go",
	Edits: []srcedit.Edit{
		srcedit.Replace("os/signal waits for a signal without spinning (wasip1 has none)",
			"func loop() {\n\tfor {\n\t\tprocess(syscall.Signal(signal_recv()))\n\t}\n}\n",
			"func loop() {\n"+
				"\t// seedfall: wasip1 delivers no signal, and signal_recv spins waiting for one\n"+
				"\t// (seedfall_signal_wasip1.go).\n"+
				"\tseedfallWait()\n"+
				"\tfor {\n\t\tprocess(syscall.Signal(signal_recv()))\n\t}\n}\n"),
	},
}, {
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
	// GOROOT-relative path → content.
	out := map[string][]byte{
		"src/syscall/" + SyscallAdded:  syscallFile,
		"src/os/signal/" + SignalAdded: []byte(signalFile),
	}
	for rel := range out {
		if _, err := os.Stat(filepath.Join(goroot, filepath.FromSlash(rel))); err == nil {
			return nil, fmt.Errorf("%s: %s already exists in GOROOT; it would be replaced, not added", Name, filepath.Join(goroot, filepath.FromSlash(rel)))
		}
	}
	for _, f := range gorootFiles {
		data, err := srcedit.ReadAndApply(Name, goroot, version, f)
		if err != nil {
			return nil, err
		}
		out[f.Path] = data
	}
	replace := map[string]string{}
	for rel, data := range out {
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return nil, err
		}
		replace[filepath.Join(goroot, filepath.FromSlash(rel))] = dst
	}
	return replace, nil
}

// Fingerprint identifies the layer's content (the syscall file and edits, and every
// port), for a build cache keyed on it.
func Fingerprint() string {
	h := sha256.New()
	h.Write([]byte(srcedit.Fingerprint(gorootFiles)))
	fmt.Fprintf(h, "\n%s %d\n", SyscallAdded, len(syscallFile))
	h.Write(syscallFile)
	fmt.Fprintf(h, "\n%s %d\n", SignalAdded, len(signalFile))
	h.Write([]byte(signalFile))
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
