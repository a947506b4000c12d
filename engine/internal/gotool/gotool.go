// Package gotool runs the go command of the toolchain that builds a node, so that
// seedfall's build overlays can replace its GOROOT files wherever it is installed.
//
// It owns the links under the cache's "goroot" directory; it runs nothing itself.
package gotool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// linkSeq numbers the temporary names of ensureLink in this process.
var linkSeq atomic.Uint64

// A toolchain that the go command fetched for GOTOOLCHAIN (or a go.mod's toolchain
// line) lives in the module cache, golang.org/toolchain@v0.0.1-go1.27.3.linux-amd64,
// and the go command refuses an overlay that replaces a file beneath GOMODCACHE: the
// net overlay, interleave and coverage all replace files of GOROOT. Such a toolchain
// is used through a symbolic link under seedfall's cache instead: its go binary is run
// directly, with GOROOT set to the link and GOTOOLCHAIN=local (so that it does not
// switch again and reset GOROOT), and the overlay's keys name files beneath the link.
// The toolchain is the same one, its files are not copied, and with -trimpath nothing
// of the path reaches the module.

// Toolchain is how a build with an overlay of GOROOT files runs the go command.
type Toolchain struct {
	Go     string   // the go command
	Env    []string // added to the environment
	GOROOT string   // the GOROOT the overlay's keys name
}

// Resolve is the toolchain to build with, given `go env GOROOT` and `go env GOMODCACHE`
// where the build runs and seedfall's cache directory (for the link).
func Resolve(goroot, modcache, cacheDir string) (Toolchain, error) {
	if goroot == "" {
		return Toolchain{}, fmt.Errorf("go env names no GOROOT")
	}
	if modcache == "" || !beneath(goroot, modcache) {
		return Toolchain{Go: "go", GOROOT: goroot}, nil
	}
	link := filepath.Join(cacheDir, "goroot", filepath.Base(goroot))
	if err := ensureLink(link, goroot); err != nil {
		return Toolchain{}, fmt.Errorf("the Go toolchain %s is in the module cache, where go build may not overlay its files, and linking it from %s failed: %w", goroot, link, err)
	}
	return Toolchain{
		Go:     filepath.Join(link, "bin", "go"),
		Env:    []string{"GOROOT=" + link, "GOTOOLCHAIN=local"},
		GOROOT: link,
	}, nil
}

// beneath reports whether path is dir or inside it.
func beneath(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// ensureLink makes link a symbolic link to target, replacing a link that points
// elsewhere; concurrent callers (two seedfall processes) both end with the link.
func ensureLink(link, target string) error {
	if cur, err := os.Readlink(link); err == nil && cur == target {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	// A name of this call's own: two processes, or two node builds of one process, may
	// make the link at once.
	tmp := fmt.Sprintf("%s.tmp%d-%d", link, os.Getpid(), linkSeq.Add(1))
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
