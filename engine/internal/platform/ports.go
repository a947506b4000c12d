package platform

import (
	"bytes"
	_ "embed"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine/internal/srcedit"
)

// Port makes one package of a module build for wasip1: files added to it and anchored
// edits of its own files. It applies to the module's versions v with Min <= v < Below.
type Port struct {
	Module     string // module path: "go.etcd.io/bbolt"
	Pkg        string // the package the files belong to: "go.etcd.io/bbolt/internal/common"
	Min, Below string // semantic versions: "v1.4.0", "v1.6.0"
	Why        string // what is missing on wasip1, for docs/overlay.md and errors
	Add        []Added
	Edit       []srcedit.File // Path relative to the module's root
	// Imports are packages that the files it brings into the wasip1 build import, which
	// the build's package list (made before the port) may lack: a ported package of
	// them is ported too.
	Imports []string
}

// Added is a file a port adds; Path is relative to the module's root.
type Added struct {
	Path string
	Text []byte
}

//go:embed files/ports/xsys_unix_wasip1.go.txt
var xsysUnix []byte

//go:embed files/ports/bbolt_common_wasm.go.txt
var bboltCommon []byte

//go:embed files/ports/bbolt13_wasm.go.txt
var bbolt13 []byte

//go:embed files/ports/boltdb_wasm.go.txt
var boltdb []byte

//go:embed files/ports/logrus_terminal_wasip1.go.txt
var logrusTerminal []byte

// buildLine is an edit that adds wasip1 to a file's build constraint.
func buildLine(what, old, new string) srcedit.Edit {
	return srcedit.Replace(what, old+"\n", new+"\n")
}

// Ports are the dependencies the layer ports, listed in docs/overlay.md.
var Ports = []Port{
	{
		Module: "golang.org/x/sys", Pkg: "golang.org/x/sys/unix", Min: "v0.0.0-0", Below: "v0.51.0",
		Why: "package unix has almost no file for wasip1: Mmap, Munmap, Msync, Madvise, Mlock, Flock, Fdatasync, Fallocate and their constants are added over syscall's",
		Add: []Added{{Path: "unix/seedfall_wasip1.go", Text: xsysUnix}},
	},
	{
		Module: "go.etcd.io/bbolt", Pkg: "go.etcd.io/bbolt/internal/common", Min: "v1.4.0", Below: "v1.6.0",
		Why: "no size-limit file for GOARCH=wasm (MaxMapSize, MaxAllocSize): 386's values are added",
		Add: []Added{{Path: "internal/common/seedfall_wasm.go", Text: bboltCommon}},
	},
	{
		Module: "go.etcd.io/bbolt", Pkg: "go.etcd.io/bbolt", Min: "v1.3.5", Below: "v1.4.0",
		Why: "no size-limit file for GOARCH=wasm (maxMapSize, maxAllocSize): 386's values are added",
		Add: []Added{{Path: "seedfall_wasm.go", Text: bbolt13}},
	},
	{
		// bbolt's predecessor, archived at v1.3.1: hashicorp/raft-boltdb/v2 imports it
		// to migrate v1 stores (MigrateToV2), so Consul's and Vault's raft stores build it.
		Module: "github.com/boltdb/bolt", Pkg: "github.com/boltdb/bolt", Min: "v1.3.1", Below: "v1.3.2",
		Why: "no size-limit file for GOARCH=wasm (maxMapSize, maxAllocSize, brokenUnaligned): 386's values are added",
		Add: []Added{{Path: "seedfall_wasm.go", Text: boltdb}},
	},
	{
		Module: "github.com/sirupsen/logrus", Pkg: "github.com/sirupsen/logrus", Min: "v1.4.0", Below: "v1.10.0",
		Why: "no terminal check (isTerminal) for wasip1: a node's output is never a terminal",
		Add: []Added{{Path: "seedfall_wasip1.go", Text: logrusTerminal}},
	},
	{
		Module: "github.com/syndtr/goleveldb", Pkg: "github.com/syndtr/goleveldb/leveldb/storage", Min: "v1.0.0", Below: "v1.1.0",
		Why: "file_storage_unix.go (flock, directory sync) leaves wasip1 out of its build constraint",
		Edit: []srcedit.File{{Path: "leveldb/storage/file_storage_unix.go", Edits: []srcedit.Edit{
			buildLine("build constraint: add wasip1",
				"//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd",
				"//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || wasip1"),
			buildLine("old build constraint: add wasip1",
				"// +build darwin dragonfly freebsd linux netbsd openbsd",
				"// +build darwin dragonfly freebsd linux netbsd openbsd wasip1"),
		}}},
	},
	{
		Module: "github.com/prometheus/prometheus", Pkg: "github.com/prometheus/prometheus/tsdb/fileutil", Min: "v0.40.0", Below: "v0.400.0",
		Why: "flock_unix.go leaves wasip1 out of its build constraint, and there is no maxMapSize for GOARCH=wasm",
		Edit: []srcedit.File{
			{Path: "tsdb/fileutil/flock_unix.go", Edits: []srcedit.Edit{
				buildLine("build constraint: add wasip1",
					"//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd",
					"//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || wasip1"),
			}},
		},
	},
	{
		Module: "github.com/dgraph-io/ristretto/v2", Pkg: "github.com/dgraph-io/ristretto/v2/z", Min: "v2.2.0", Below: "v2.3.0",
		Why: "mmap_wasip1.go stubs mmap, munmap, madvise and msync out with ENOSYS (badger v4 maps its memtables and value log through them): mmap_unix.go, which calls x/sys/unix, is built for wasip1 instead",
		Edit: []srcedit.File{
			{Path: "z/mmap_unix.go", Edits: []srcedit.Edit{
				buildLine("build constraint: add wasip1",
					"//go:build !windows && !darwin && !plan9 && !linux && !wasip1 && !js",
					"//go:build !windows && !darwin && !plan9 && !linux && !js"),
				buildLine("old build constraint: add wasip1",
					"// +build !windows,!darwin,!plan9,!linux,!wasip1,!js",
					"// +build !windows,!darwin,!plan9,!linux,!js"),
			}},
			{Path: "z/mmap_wasip1.go", Edits: []srcedit.Edit{
				buildLine("build constraint: leave the ENOSYS stubs out", "//go:build wasip1", "//go:build ignore"),
			}},
		},
		Imports: []string{"golang.org/x/sys/unix"},
	},
	{
		Module: "github.com/dgraph-io/badger/v4", Pkg: "github.com/dgraph-io/badger/v4/y", Min: "v4.9.0", Below: "v4.10.0",
		Why: "file_dsync.go leaves wasip1 out, so a file badger opens for synchronous writes (KEYREGISTRY, the manifest's rewrite) is opened without O_DSYNC and a crash loses what Linux keeps",
		Edit: []srcedit.File{
			{Path: "y/file_dsync.go", Edits: []srcedit.Edit{
				buildLine("build constraint: add wasip1",
					"//go:build !dragonfly && !freebsd && !windows && !plan9 && !js && !wasip1",
					"//go:build !dragonfly && !freebsd && !windows && !plan9 && !js"),
				buildLine("old build constraint: add wasip1",
					"// +build !dragonfly,!freebsd,!windows,!plan9,!js,!wasip1",
					"// +build !dragonfly,!freebsd,!windows,!plan9,!js"),
			}},
		},
		Imports: []string{"golang.org/x/sys/unix"},
	},
	{
		Module: "github.com/xujiajun/mmap-go", Pkg: "github.com/xujiajun/mmap-go", Min: "v1.0.0", Below: "v1.1.0",
		Why:     "mmap_unix.go leaves wasip1 out of its build constraint",
		Imports: []string{"golang.org/x/sys/unix"},
		Edit: []srcedit.File{{Path: "mmap_unix.go", Edits: []srcedit.Edit{
			buildLine("build constraint: add wasip1",
				"// +build darwin dragonfly freebsd linux openbsd solaris netbsd",
				"// +build darwin dragonfly freebsd linux openbsd solaris netbsd wasip1"),
		}}},
	},
}

// Module is a module a build uses, as `go list -m -json` describes it.
type Module struct {
	Path, Version, Dir string
}

// PortError is a build that imports a ported package of a module at a version the port
// was not written for, or whose files the port's edits do not fit.
type PortError struct {
	Port    Port
	Version string
	Dir     string
	Reason  string
}

func (e *PortError) Error() string {
	v := e.Version
	if v == "" {
		v = "a local copy (no version)"
	}
	written := e.Port.Min
	if e.Port.Below != "" {
		written += " up to but not including " + e.Port.Below
	}
	return fmt.Sprintf("%s: %s@%s (package %s, at %s): %s; seedfall's port of it (%s) was written for %s (docs/overlay.md, \"Ports\")",
		Name, e.Port.Module, v, e.Port.Pkg, e.Dir, e.Reason, e.Port.Why, written)
}

// Files returns the files the ports add or edit for a build whose imported packages
// are pkgs (import path to the module it belongs to), keyed by absolute path: the
// module's directory joined with the port's file. A module one of whose ported
// packages is imported, at a version no port of the module was written for, is a
// *PortError.
//
// resolve finds the module of a package that a port's Imports names and pkgs lacks
// (ok false: the build cannot import it at all).
func Files(pkgs map[string]Module, resolve func(pkg string) (m Module, ok bool, err error)) (map[string][]byte, error) {
	pkgs = maps.Clone(pkgs)
	for {
		out, more, err := files(pkgs)
		if err != nil || len(more) == 0 {
			return out, err
		}
		added := false
		for _, imp := range more {
			m, ok, err := resolve(imp)
			if err != nil {
				return nil, err
			}
			if ok {
				pkgs[imp] = m
				added = true
			}
		}
		if !added {
			return out, nil
		}
	}
}

// files is one round of Files: the files of the ports that pkgs select, and the
// packages their Imports name that pkgs lacks.
func files(pkgs map[string]Module) (map[string][]byte, []string, error) {
	out := map[string][]byte{}
	var more []string
	done := map[string]bool{}
	for _, first := range Ports {
		if done[first.Module] {
			continue
		}
		var m Module
		imported := false
		for _, q := range Ports {
			if q.Module == first.Module && !imported {
				if pm, ok := pkgs[q.Pkg]; ok {
					m, imported = pm, true
					first.Pkg = q.Pkg // the package errors name
				}
			}
		}
		if !imported {
			continue
		}
		done[first.Module] = true
		var ranges []string
		covered := false
		for i, q := range Ports {
			if q.Module != first.Module {
				continue
			}
			ranges = append(ranges, q.Min+" up to but not including "+q.Below)
			if !inRange(m.Version, q.Min, q.Below) {
				continue
			}
			covered = true
			if _, ok := pkgs[q.Pkg]; ok {
				if err := Ports[i].files(m, out); err != nil {
					return nil, nil, err
				}
				for _, imp := range q.Imports {
					if _, ok := pkgs[imp]; !ok && !slices.Contains(more, imp) {
						more = append(more, imp)
					}
				}
			}
		}
		if !covered {
			reason := "this version is outside the range"
			if len(ranges) > 1 {
				first.Min, first.Below = strings.Join(ranges, ", or "), ""
				reason = "this version is outside every range"
			}
			return nil, nil, &PortError{Port: first, Version: m.Version, Dir: m.Dir, Reason: reason}
		}
	}
	return out, more, nil
}

// files adds the port's files of module m to out.
func (port *Port) files(m Module, out map[string][]byte) error {
	for _, a := range port.Add {
		dst := filepath.Join(m.Dir, filepath.FromSlash(a.Path))
		if _, err := os.Stat(dst); err == nil {
			return &PortError{Port: *port, Version: m.Version, Dir: m.Dir, Reason: fmt.Sprintf("it already has %s, which the port adds", a.Path)}
		}
		out[dst] = a.Text
	}
	for _, f := range port.Edit {
		src := filepath.Join(m.Dir, filepath.FromSlash(f.Path))
		data, err := os.ReadFile(src)
		if err != nil {
			return &PortError{Port: *port, Version: m.Version, Dir: m.Dir, Reason: fmt.Sprintf("cannot read %s: %v", f.Path, err)}
		}
		for _, e := range f.Edits {
			applied := false
			var counts []string
			for _, v := range e.Variants {
				n := bytes.Count(data, []byte(v.Anchor))
				if n == 1 {
					data = bytes.Replace(data, []byte(v.Anchor), []byte(v.With), 1)
					applied = true
					break
				}
				counts = append(counts, strconv.Itoa(n))
			}
			if !applied {
				return &PortError{Port: *port, Version: m.Version, Dir: m.Dir,
					Reason: fmt.Sprintf("the edit %q of %s does not apply: the code it changes occurs %s times, want exactly once", e.What, f.Path, strings.Join(counts, ", "))}
			}
		}
		out[src] = data
	}
	return nil
}
