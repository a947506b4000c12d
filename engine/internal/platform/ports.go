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

// buildLine is an edit that adds wasip1 to a file's build constraint.
func buildLine(what, old, new string) srcedit.Edit {
	return srcedit.Replace(what, old+"\n", new+"\n")
}

// Ports are the dependencies the layer ports, listed in docs/overlay.md: what the Linux
// personality (linux.go) cannot do for them. None is needed now; the mechanism stays
// for a library whose Linux files the simulator cannot serve.
var Ports = []Port{}

// Module is a module a build uses, as `go list -m -json` describes it.
type Module struct {
	Path, Version, Dir string
	// Required is the version the build list selects, before a replace directive that
	// names another version of the module (Version is the replacement's).
	Required string
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
