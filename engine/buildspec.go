package engine

import (
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine/internal/build"
)

// BuildError is a node package that did not compile; Output is the compiler's.
type BuildError = build.Error

// buildSpec is what building node n of cfg needs.
func buildSpec(cfg *Config, n NodeConfig) build.Spec {
	dir, pkg := pkgModule(cfg.Dir, n.Pkg)
	return build.Spec{
		Dir: dir, ConfigPath: cfg.Path,
		Name: n.Name, Pkg: pkg, Test: n.Test, Tags: n.Tags, NetOverlay: n.NetOverlay, Patches: n.Patches,
		Interleave: n.Interleave.On, InterleaveFileOps: n.Interleave.FileOps,
		Coverage: coverHook(cfg.Coverage),
	}
}

// pkgModule is where node package pkg of a config in dir is built: in dir, unless pkg is
// a directory ("../raft/client") of another module of the repository, which is then
// built in that module, with its own go.mod (examples/raft-boltdb's workload is
// examples/raft's client, which requires another hashicorp/raft).
//
// An absolute pkg (the configs `seedfall test` derives, which live in the cache) is
// built in its own module.
func pkgModule(dir, pkg string) (string, string) {
	if filepath.IsAbs(pkg) {
		if root := moduleRoot(pkg); root != "" {
			if rel, err := filepath.Rel(root, pkg); err == nil {
				if rel == "." {
					return root, "."
				}
				return root, "./" + filepath.ToSlash(rel)
			}
		}
		return dir, pkg
	}
	if pkg != "." && !strings.HasPrefix(pkg, "./") && !strings.HasPrefix(pkg, "../") {
		return dir, pkg
	}
	abs := filepath.Join(dir, pkg)
	root := moduleRoot(abs)
	if root == "" || root == moduleRoot(dir) {
		return dir, pkg
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return dir, pkg
	}
	if rel == "." {
		return root, "."
	}
	return root, "./" + filepath.ToSlash(rel)
}

// moduleRoot is the nearest directory at or above dir with a go.mod, or "".
func moduleRoot(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "go.mod")) {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// coverHook is the config's coverage settings as a build.Coverage; nil without.
func coverHook(c *CoverageConfig) build.Coverage {
	if c == nil {
		return nil
	}
	return coverageHook{c}
}

type coverageHook struct{ c *CoverageConfig }

func (h coverageHook) Flags(pkg string) []string { return h.c.buildFlags(pkg) }
func (h coverageHook) Output(out string)         { h.c.noteUnmatched(out) }
