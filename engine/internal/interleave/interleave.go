// Package interleave builds the guest side of a node's "interleave" option: a Go runtime
// whose scheduler lets the seedfall host choose which ready goroutine runs next.
//
// Go's wasip1 runtime is single-threaded and has no sysmon, so runqput never uses
// runnext and ready goroutines run in FIFO order (randomizeScheduler is raceenabled in
// runtime/proc.go): for the same host answers a node's goroutines always interleave the
// same way. A node built with interleave gets, through the build overlay,
//
//   - a patched copy of $GOROOT/src/runtime/proc.go, generated at build time from the
//     building toolchain's own file: runqget, before it takes the head of the local run
//     queue, calls seedfallInterleave, and findRunnable, before it runs the first
//     goroutine the netpoller readied, calls seedfallInterleaveList;
//   - an added runtime file, seedfall_interleave.go, in which seedfallInterleave asks the
//     host (seedfall.sched_pick, docs/ABI.md) which of the n >= 2 ready goroutines
//     runs next and swaps it to the head of the queue (seedfallInterleaveList: of the
//     netpoller's list).
//
// With FileOps ({"file_ops": true}) the overlay also replaces internal/poll/fd_mutex.go:
// every operation on an open file (read, write, fsync, seek, stat, close) starts with a
// scheduling point, where the host may let another ready goroutine run first; and
// syscall/fs_wasip1.go, so that every path operation (open, mkdir, unlink, rmdir,
// rename, link, symlink) does too. Linux runs
// other goroutines while one is in a blocking syscall; wasip1 runs the syscall without
// switching, so without it a goroutine that answers a client while another is about to
// fsync always loses the race to the fsync.
//
// The choice is the host's, drawn from a random stream of the incarnation's own, so a
// seed replays exactly and the guest's own randomness (random_get) is the same with and
// without interleave.
//
// The patch is a few anchored text edits (internal/srcedit) of the building toolchain's
// own proc.go (and fd_mutex.go). A toolchain older than srcedit.Oldest, or a file in which
// an edit's anchor is not found exactly once, is refused with a *srcedit.Error naming the
// file, the edit and the Go version: the build never goes on with an unpatched runtime.
// Any release whose files the edits fit is patched; srcedit.Supported are the ones tested.
//
// It owns the patch and the added file; it may not build anything (internal/build runs
// go build with its overlay) or touch the GOROOT it reads.
package interleave

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seedfall/seedfall/engine/internal/srcedit"
)

// Name is how the overlay names itself in errors.
const Name = "interleave"

// ReplacedFile is the runtime file the overlay replaces with a patched copy, and
// AddedFile the one it adds, relative to $GOROOT.
const (
	ReplacedFile = "src/runtime/proc.go"
	AddedFile    = "src/runtime/seedfall_interleave.go"
	// PollFile is the file FileOps also replaces, PollAddedFile the one it adds.
	PollFile      = "src/internal/poll/fd_mutex.go"
	PollAddedFile = "src/internal/poll/seedfall_fileops.go"
	// SyscallFile is the file FileOps also replaces for path operations (open, mkdir,
	// unlink, rmdir, rename, link, symlink), SyscallAddedFile the one it adds.
	SyscallFile      = "src/syscall/fs_wasip1.go"
	SyscallAddedFile = "src/syscall/seedfall_pathops.go"
)

// ImportPick is the seedfall host function the patched runtime calls: a module that
// does not import it was not built with the overlay (see VerifyBuild).
const ImportPick = "sched_pick"

//go:embed files/seedfall_interleave.go.txt
var addedFile []byte

//go:embed files/seedfall_fileops.go.txt
var pollAddedFile []byte

//go:embed files/seedfall_pathops.go.txt
var syscallAddedFile []byte

// procFile is proc.go's edits.
var procFile = srcedit.File{Path: ReplacedFile, Edits: []srcedit.Edit{
	srcedit.Replace("runqget: let the host choose the next goroutine",
		"\t\tif t == h {\n"+
			"\t\t\treturn nil, false\n"+
			"\t\t}\n"+
			"\t\tgp := pp.runq[h%uint32(len(pp.runq))].ptr()\n",
		"\t\tif t == h {\n"+
			"\t\t\treturn nil, false\n"+
			"\t\t}\n"+
			"\t\tseedfallInterleave(pp, h, t) // seedfall: interleave\n"+
			"\t\tgp := pp.runq[h%uint32(len(pp.runq))].ptr()\n"),
	// findRunnable runs the first goroutine the netpoller readied at once (the rest go
	// to the run queue): the host chooses that one too.
	srcedit.Replace("findRunnable's non-blocking netpoll: let the host choose",
		"\t\tif !list.empty() { // non-blocking\n"+
			"\t\t\tgp := list.pop()\n",
		"\t\tif !list.empty() { // non-blocking\n"+
			"\t\t\tseedfallInterleaveList(&list) // seedfall: interleave\n"+
			"\t\t\tgp := list.pop()\n"),
	srcedit.Replace("findRunnable's blocking netpoll: let the host choose",
		"\t\t\tacquirep(pp)\n"+
			"\t\t\tif !list.empty() {\n"+
			"\t\t\t\tgp := list.pop()\n",
		"\t\t\tacquirep(pp)\n"+
			"\t\t\tif !list.empty() {\n"+
			"\t\t\t\tseedfallInterleaveList(&list) // seedfall: interleave\n"+
			"\t\t\t\tgp := list.pop()\n"),
}}

// pollFile is fd_mutex.go's edits, with FileOps: the FD methods every file operation
// starts with (incref, readLock, writeLock) first call seedfallFileOp.
var pollFile = srcedit.File{Path: PollFile, Edits: []srcedit.Edit{
	srcedit.Replace("incref: a scheduling point before a file operation",
		"func (fd *FD) incref() error {\n",
		"func (fd *FD) incref() error {\n\tseedfallFileOp(fd.isFile) // seedfall: interleave file_ops\n"),
	srcedit.Replace("readLock: a scheduling point before a file read",
		"func (fd *FD) readLock() error {\n",
		"func (fd *FD) readLock() error {\n\tseedfallFileOp(fd.isFile) // seedfall: interleave file_ops\n"),
	srcedit.Replace("writeLock: a scheduling point before a file write",
		"func (fd *FD) writeLock() error {\n",
		"func (fd *FD) writeLock() error {\n\tseedfallFileOp(fd.isFile) // seedfall: interleave file_ops\n"),
}}

// syscallFile is fs_wasip1.go's edits, with FileOps: each path operation first calls
// seedfallPathOp (a file operation on an open file goes through internal/poll, whose
// edits cover it; a path operation does not).
var syscallFile = srcedit.File{Path: SyscallFile, Edits: []srcedit.Edit{
	pathOp("Open", "func Open(path string, openmode int, perm uint32) (int, error) {\n"),
	pathOp("Mkdir", "func Mkdir(path string, perm uint32) error {\n"),
	pathOp("Unlink", "func Unlink(path string) error {\n"),
	pathOp("Rmdir", "func Rmdir(path string) error {\n"),
	pathOp("Rename", "func Rename(from, to string) error {\n"),
	pathOp("Link", "func Link(path, link string) error {\n"),
	pathOp("Symlink", "func Symlink(path, link string) error {\n"),
}}

// pathOp is the edit that makes fn's first statement a scheduling point.
func pathOp(fn, signature string) srcedit.Edit {
	return srcedit.Replace(fn+": a scheduling point before a path operation", signature,
		signature+"\tseedfallPathOp() // seedfall: interleave file_ops\n")
}

// Patch applies the edits to the source of runtime/proc.go of the toolchain at goroot,
// whose release is version.
func Patch(src []byte, goroot, version string) ([]byte, error) {
	return patch(src, procFile, goroot, version)
}

// patch applies f's edits to src, and heads the result with where it came from.
func patch(src []byte, f srcedit.File, goroot, version string) ([]byte, error) {
	out, err := srcedit.Apply(Name, goroot, version, f, src)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(src)
	if version == "" {
		version = "an unknown Go version"
	}
	head := fmt.Sprintf("// seedfall: generated by engine/internal/interleave from %s of %s (sha256 %s);\n// a file of the Go runtime of a node built with \"interleave\". DO NOT EDIT.\n\n",
		f.Path, version, hex.EncodeToString(sum[:]))
	return append([]byte(head), out...), nil
}

// WriteOverlay writes the patched proc.go and the added runtime file under dir (with
// fileOps, also the patched fd_mutex.go and the added internal/poll file) and returns
// the overlay's entries: GOROOT path -> replacement. goroot must be the building
// toolchain's `go env GOROOT` (go build ignores keys that name none of its files); a
// toolchain too old, or whose files the edits do not fit, is a *srcedit.Error.
func WriteOverlay(dir, goroot string, fileOps bool) (map[string]string, error) {
	if goroot == "" {
		return nil, errors.New("interleave: empty GOROOT")
	}
	v, err := srcedit.CheckToolchain(Name, goroot)
	if err != nil {
		return nil, err
	}
	// Every file is read and patched before anything is written: a toolchain the edits
	// do not fit leaves no overlay behind.
	type entry struct {
		orig string // the GOROOT file replaced or added
		name string // its replacement's name under dir
		data []byte
	}
	var out []entry
	replace := func(f srcedit.File, name string) error {
		orig := filepath.Join(goroot, filepath.FromSlash(f.Path))
		src, err := os.ReadFile(orig)
		if err != nil {
			return &srcedit.Error{Overlay: Name, GOROOT: goroot, Version: v, File: f.Path, Reason: fmt.Sprintf("cannot read it: %v", err)}
		}
		patched, err := patch(src, f, goroot, v)
		if err != nil {
			return err
		}
		out = append(out, entry{orig, name, patched})
		return nil
	}
	add := func(file string, data []byte) error {
		added := filepath.Join(goroot, filepath.FromSlash(file))
		if _, err := os.Stat(added); err == nil {
			return fmt.Errorf("interleave: %s already exists in GOROOT; it would be replaced, not added", added)
		}
		out = append(out, entry{added, filepath.Base(file), data})
		return nil
	}
	if err := replace(procFile, "proc.go"); err != nil {
		return nil, err
	}
	if err := add(AddedFile, addedFile); err != nil {
		return nil, err
	}
	if fileOps {
		if err := replace(pollFile, "fd_mutex.go"); err != nil {
			return nil, err
		}
		if err := add(PollAddedFile, pollAddedFile); err != nil {
			return nil, err
		}
		if err := replace(syscallFile, "fs_wasip1.go"); err != nil {
			return nil, err
		}
		if err := add(SyscallAddedFile, syscallAddedFile); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, e := range out {
		repl := filepath.Join(dir, e.name)
		if err := os.WriteFile(repl, e.data, 0o644); err != nil {
			return nil, err
		}
		files[e.orig] = repl
	}
	return files, nil
}

// VerifyBuild checks that a module built with interleave imports seedfall.sched_pick,
// given its imports as "module.name" strings: otherwise go build ignored the overlay.
func VerifyBuild(imports []string) error {
	want := "seedfall." + ImportPick
	for _, im := range imports {
		if im == want {
			return nil
		}
	}
	return fmt.Errorf("the module does not import %s: the interleave overlay of %s was not applied (does `go env GOROOT` in the config's directory name the toolchain that built it?)", want, ReplacedFile)
}

// Fingerprint identifies the overlay's content (the added files and the edits), for a
// build cache keyed on it.
func Fingerprint(fileOps bool) string {
	h := sha256.New()
	h.Write(addedFile)
	h.Write([]byte(srcedit.Fingerprint([]srcedit.File{procFile})))
	if fileOps {
		h.Write(pollAddedFile)
		h.Write([]byte(srcedit.Fingerprint([]srcedit.File{pollFile})))
		h.Write(syscallAddedFile)
		h.Write([]byte(srcedit.Fingerprint([]srcedit.File{syscallFile})))
	}
	return hex.EncodeToString(h.Sum(nil))
}
