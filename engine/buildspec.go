package engine

import "github.com/seedfall/seedfall/engine/internal/build"

// BuildError is a node package that did not compile; Output is the compiler's.
type BuildError = build.Error

// buildSpec is what building node n of cfg needs.
func buildSpec(cfg *Config, n NodeConfig) build.Spec {
	return build.Spec{
		Dir: cfg.Dir, ConfigPath: cfg.Path,
		Name: n.Name, Pkg: n.Pkg, Tags: n.Tags, NetOverlay: n.NetOverlay, Patches: n.Patches,
		Interleave: n.Interleave.On, InterleaveFileOps: n.Interleave.FileOps,
		Coverage: coverHook(cfg.Coverage),
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
