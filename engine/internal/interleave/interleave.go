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
// scheduling point, where the host may let another ready goroutine run first. Linux runs
// other goroutines while one is in a blocking syscall; wasip1 runs the syscall without
// switching, so without it a goroutine that answers a client while another is about to
// fsync always loses the race to the fsync.
//
// The choice is the host's, drawn from a random stream of the incarnation's own, so a
// seed replays exactly and the guest's own randomness (random_get) is the same with and
// without interleave.
//
// The patch is a few exact text edits of proc.go. A toolchain of another release series
// than GoVersion, or a proc.go in which an edit's anchor is not found exactly once, is
// refused with an error naming the version and the file: the build never goes on with an
// unpatched runtime.
//
// It owns the patch and the added file; it may not build anything (internal/build runs
// go build with its overlay) or touch the GOROOT it reads.
package interleave

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// GoVersion is the Go release series whose runtime the patch is written against.
const GoVersion = "go1.26"

// ReplacedFile is the runtime file the overlay replaces with a patched copy, and
// AddedFile the one it adds, relative to $GOROOT.
const (
	ReplacedFile = "src/runtime/proc.go"
	AddedFile    = "src/runtime/seedfall_interleave.go"
	// PollFile is the file FileOps also replaces, PollAddedFile the one it adds.
	PollFile      = "src/internal/poll/fd_mutex.go"
	PollAddedFile = "src/internal/poll/seedfall_fileops.go"
)

// ImportPick is the seedfall host function the patched runtime calls: a module that
// does not import it was not built with the overlay (see VerifyBuild).
const ImportPick = "sched_pick"

//go:embed files/seedfall_interleave.go.txt
var addedFile []byte

//go:embed files/seedfall_fileops.go.txt
var pollAddedFile []byte

// edit is one change to proc.go: anchor must occur exactly once, and is replaced by
// with.
type edit struct {
	what, anchor, with string
}

// edits are proc.go's.
var edits = []edit{{
	what: "runqget: let the host choose the next goroutine",
	anchor: "\t\tif t == h {\n" +
		"\t\t\treturn nil, false\n" +
		"\t\t}\n" +
		"\t\tgp := pp.runq[h%uint32(len(pp.runq))].ptr()\n",
	with: "\t\tif t == h {\n" +
		"\t\t\treturn nil, false\n" +
		"\t\t}\n" +
		"\t\tseedfallInterleave(pp, h, t) // seedfall: interleave\n" +
		"\t\tgp := pp.runq[h%uint32(len(pp.runq))].ptr()\n",
}, {
	// findRunnable runs the first goroutine the netpoller readied at once (the rest go
	// to the run queue): the host chooses that one too.
	what: "findRunnable's non-blocking netpoll: let the host choose",
	anchor: "\t\tif !list.empty() { // non-blocking\n" +
		"\t\t\tgp := list.pop()\n",
	with: "\t\tif !list.empty() { // non-blocking\n" +
		"\t\t\tseedfallInterleaveList(&list) // seedfall: interleave\n" +
		"\t\t\tgp := list.pop()\n",
}, {
	what: "findRunnable's blocking netpoll: let the host choose",
	anchor: "\t\t\tacquirep(pp)\n" +
		"\t\t\tif !list.empty() {\n" +
		"\t\t\t\tgp := list.pop()\n",
	with: "\t\t\tacquirep(pp)\n" +
		"\t\t\tif !list.empty() {\n" +
		"\t\t\t\tseedfallInterleaveList(&list) // seedfall: interleave\n" +
		"\t\t\t\tgp := list.pop()\n",
}}

// pollEdits are fd_mutex.go's, with FileOps: the FD methods every file operation starts
// with (incref, readLock, writeLock) first call seedfallFileOp.
var pollEdits = []edit{{
	what:   "incref: a scheduling point before a file operation",
	anchor: "func (fd *FD) incref() error {\n",
	with:   "func (fd *FD) incref() error {\n\tseedfallFileOp(fd.isFile) // seedfall: interleave file_ops\n",
}, {
	what:   "readLock: a scheduling point before a file read",
	anchor: "func (fd *FD) readLock() error {\n",
	with:   "func (fd *FD) readLock() error {\n\tseedfallFileOp(fd.isFile) // seedfall: interleave file_ops\n",
}, {
	what:   "writeLock: a scheduling point before a file write",
	anchor: "func (fd *FD) writeLock() error {\n",
	with:   "func (fd *FD) writeLock() error {\n\tseedfallFileOp(fd.isFile) // seedfall: interleave file_ops\n",
}}

// VersionError is a toolchain the patch does not support.
type VersionError struct {
	GOROOT, Version, Reason string
}

func (e *VersionError) Error() string {
	v := e.Version
	if v == "" {
		v = "an unknown version"
	}
	return fmt.Sprintf("interleave: the runtime patch supports %s only, but the Go toolchain at %s is %s (%s); build with a %s toolchain or remove \"interleave\" from the node",
		GoVersion, e.GOROOT, v, e.Reason, GoVersion)
}

// Version reads the release of the toolchain at goroot from its VERSION file.
func Version(goroot string) (string, error) {
	b, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return "", err
	}
	v, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(v), nil
}

// supported reports whether release v is of the GoVersion series.
func supported(v string) bool {
	return v == GoVersion || strings.HasPrefix(v, GoVersion+".") || strings.HasPrefix(v, GoVersion+"rc")
}

// Patch applies the edits to the source of runtime/proc.go. version names the
// toolchain in errors.
func Patch(src []byte, goroot, version string) ([]byte, error) {
	return patch(src, ReplacedFile, edits, goroot, version)
}

// patch applies es to src, the source of file (relative to goroot).
func patch(src []byte, file string, es []edit, goroot, version string) ([]byte, error) {
	out := src
	for _, e := range es {
		if n := bytes.Count(out, []byte(e.anchor)); n != 1 {
			return nil, &VersionError{GOROOT: goroot, Version: version,
				Reason: fmt.Sprintf("%s: the code the patch edits (%s) occurs %d times, want once", file, e.what, n)}
		}
		out = bytes.Replace(out, []byte(e.anchor), []byte(e.with), 1)
	}
	sum := sha256.Sum256(src)
	head := fmt.Sprintf("// seedfall: generated by engine/internal/interleave from %s of %s (sha256 %s);\n// a file of the Go runtime of a node built with \"interleave\". DO NOT EDIT.\n\n",
		file, version, hex.EncodeToString(sum[:]))
	return append([]byte(head), out...), nil
}

// WriteOverlay writes the patched proc.go and the added runtime file under dir (with
// fileOps, also the patched fd_mutex.go and the added internal/poll file) and returns
// the overlay's entries: GOROOT path -> replacement. goroot must be the building
// toolchain's `go env GOROOT` (go build ignores keys that name none of its files); a
// toolchain of another series, or whose files the edits do not fit, is a *VersionError.
func WriteOverlay(dir, goroot string, fileOps bool) (map[string]string, error) {
	if goroot == "" {
		return nil, errors.New("interleave: empty GOROOT")
	}
	v, err := Version(goroot)
	if err != nil {
		return nil, &VersionError{GOROOT: goroot, Reason: fmt.Sprintf("no readable VERSION file: %v", err)}
	}
	if !supported(v) {
		return nil, &VersionError{GOROOT: goroot, Version: v, Reason: "another release series"}
	}
	// Every file is read and patched before anything is written: a toolchain the edits
	// do not fit leaves no overlay behind.
	type entry struct {
		orig string // the GOROOT file replaced or added
		name string // its replacement's name under dir
		data []byte
	}
	var out []entry
	replace := func(file string, es []edit, name string) error {
		orig := filepath.Join(goroot, filepath.FromSlash(file))
		src, err := os.ReadFile(orig)
		if err != nil {
			return &VersionError{GOROOT: goroot, Version: v, Reason: fmt.Sprintf("cannot read %s: %v", file, err)}
		}
		patched, err := patch(src, file, es, goroot, v)
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
	if err := replace(ReplacedFile, edits, "proc.go"); err != nil {
		return nil, err
	}
	if err := add(AddedFile, addedFile); err != nil {
		return nil, err
	}
	if fileOps {
		if err := replace(PollFile, pollEdits, "fd_mutex.go"); err != nil {
			return nil, err
		}
		if err := add(PollAddedFile, pollAddedFile); err != nil {
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
	for _, e := range edits {
		fmt.Fprintf(h, "\x00%s\x00%s\x00%s", e.what, e.anchor, e.with)
	}
	if fileOps {
		h.Write(pollAddedFile)
		for _, e := range pollEdits {
			fmt.Fprintf(h, "\x00%s\x00%s\x00%s", e.what, e.anchor, e.with)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
