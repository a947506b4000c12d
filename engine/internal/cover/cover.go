// Package cover is the guest side and the file formats of seedfall's coverage of the
// system under test (docs/ABI.md, "Coverage").
//
// A node built with coverage is compiled with `go build -cover -covermode=count
// -coverpkg=...` and a build overlay that replaces one file of the standard library,
// $GOROOT/src/internal/coverage/cfile/hooks.go, with files/hooks_seedfall.go.txt. Its
// InitHook, which the compiler calls from the main package's init, then neither writes
// a meta-data file nor registers the exit hook that writes counters into GOCOVERDIR:
// it hands the host the addresses of the package meta-data blobs and of the counter
// arrays in linear memory (seedfall.cover_meta, seedfall.cover_counters). The host
// reads the counters out of the guest's memory when an incarnation ends, however it
// ends.
//
// The rest of the package reads and writes Go's coverage data files, as `go tool
// covdata` and `go tool cover` read them: the meta-data file (covmeta.<hash>), the
// counter file (covcounters.<hash>.<pid>.<time>) and the package meta-data blobs inside
// the former. It is written from the format's description in the Go distribution
// (internal/coverage/defs.go), not from its code.
//
// It owns the hook file and the formats; it may not read a guest's memory or run
// anything (the engine reads the counters and hands them over), and nothing it computes
// reaches a run's trace.
package cover

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

//go:embed files/hooks_seedfall.go.txt
var hooksFile []byte

// ReplacedFile is the standard library file that the overlay replaces, relative to
// $GOROOT.
const ReplacedFile = "src/internal/coverage/cfile/hooks.go"

// Import names of the seedfall host module that only the replacement file imports: a
// build whose module lacks them did not get the overlay (see VerifyBuild).
const (
	ImportMeta     = "cover_meta"
	ImportCounters = "cover_counters"
)

// WriteOverlayFile writes the replacement of hooks.go under dir and returns the overlay
// entry: the path it replaces in goroot and the path of the replacement. It refuses a
// goroot without the file, since go build would ignore the entry without a word.
func WriteOverlayFile(dir, goroot string) (orig, repl string, err error) {
	if goroot == "" {
		return "", "", errors.New("coverage overlay: empty GOROOT")
	}
	orig = filepath.Join(goroot, filepath.FromSlash(ReplacedFile))
	if _, err := os.Stat(orig); err != nil {
		return "", "", fmt.Errorf("coverage overlay: the Go toolchain at %s has no %s (coverage needs Go 1.23 or later): %v", goroot, ReplacedFile, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	repl = filepath.Join(dir, "hooks_seedfall.go")
	if err := os.WriteFile(repl, hooksFile, 0o644); err != nil {
		return "", "", err
	}
	return orig, repl, nil
}

// VerifyBuild checks that a module built with coverage imports the coverage calls of
// the seedfall host module, given its imports as "module.name" strings.
func VerifyBuild(imports []string) error {
	want := "seedfall." + ImportCounters
	for _, im := range imports {
		if im == want {
			return nil
		}
	}
	return fmt.Errorf("the module does not import %s: the coverage overlay of %s was not applied (does `go env GOROOT` in the config's directory name the toolchain that built it?)", want, ReplacedFile)
}

// Counter modes and granularities, as Go numbers them in its files.
const (
	ModeSet      = 1
	ModeCount    = 2
	ModeAtomic   = 3
	GranPerBlock = 1
	GranPerFunc  = 2
)

// ModeName is a counter mode's name ("set", "count", "atomic").
func ModeName(m uint8) string {
	switch m {
	case ModeSet:
		return "set"
	case ModeCount:
		return "count"
	case ModeAtomic:
		return "atomic"
	case 4:
		return "regonly"
	case 5:
		return "testmain"
	}
	return "<invalid>"
}

// GranName is a counter granularity's name.
func GranName(g uint8) string {
	switch g {
	case GranPerBlock:
		return "perblock"
	case GranPerFunc:
		return "perfunc"
	}
	return "<invalid>"
}

// hexHash renders a hash as the file names carry it.
func hexHash(h [16]byte) string { return fmt.Sprintf("%x", h[:]) }

// Fingerprint identifies the coverage overlay's content (the embedded hooks file), for
// a build cache keyed on it.
func Fingerprint() string {
	h := sha256.Sum256(hooksFile)
	return hex.EncodeToString(h[:])
}
