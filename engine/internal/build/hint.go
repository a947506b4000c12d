package build

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/seedfall/seedfall/engine/internal/platform"
)

// A dependency that does not build for the simulator gets, before the compiler's lines,
// what failed (its module and version, the identifiers the compiler found missing) and
// the way out. The compiler's output names packages ("# go.etcd.io/bbolt") and, under
// each, its errors ("undefined: maxMapSize", "undefined: unix.Mmap").

var (
	pkgHeader = regexp.MustCompile(`^# (\S+)`)
	undefined = regexp.MustCompile(`undefined: ([A-Za-z_][A-Za-z0-9_.]*)`)
)

// failedDep is one package of a dependency that the compiler rejected.
type failedDep struct {
	pkg     string
	module  platform.Module
	missing []string
}

// hint says which dependencies failed to build and what to do, or "" when every
// package the compiler names is the user's own (its main module) or unknown.
func hint(output string, deps []platform.Pkg, mainModule string) string {
	byPath := map[string]platform.Pkg{}
	for _, d := range deps {
		byPath[d.ImportPath] = d
	}
	var failed []*failedDep
	var cur *failedDep
	for _, line := range strings.Split(output, "\n") {
		if m := pkgHeader.FindStringSubmatch(line); m != nil {
			cur = nil
			path, _, _ := strings.Cut(m[1], " ") // "pkg [pkg.test]"
			d, ok := byPath[path]
			if !ok || d.Standard || d.Module.Path == mainModule || d.Module.Path == platform.SeedfallModule {
				continue
			}
			cur = &failedDep{pkg: path, module: d.Module}
			failed = append(failed, cur)
			continue
		}
		if cur == nil {
			continue
		}
		for _, m := range undefined.FindAllStringSubmatch(line, -1) {
			if !slices.Contains(cur.missing, m[1]) {
				cur.missing = append(cur.missing, m[1])
			}
		}
	}
	if len(failed) == 0 {
		return ""
	}
	var b strings.Builder
	for _, f := range failed {
		v := f.module.Version
		if v == "" {
			v = "(local: " + f.module.Dir + ")"
		}
		fmt.Fprintf(&b, "%s@%s (package %s) does not build for the simulator", f.module.Path, v, f.pkg)
		if len(f.missing) > 0 {
			slices.Sort(f.missing)
			fmt.Fprintf(&b, ": undefined %s", strings.Join(f.missing, ", "))
		}
		b.WriteString(".\n")
	}
	fmt.Fprintf(&b, "seedfall builds dependencies as for Linux (its Linux personality, docs/overlay.md). "+
		"To run now, give the node a \"patches\" entry: a unified diff that supplies what is missing, "+
		"its file headers naming import paths (README, \"Your code\"; a simulation test takes simtest.Patches). "+
		"And report it as an issue "+
		"naming the %s and the module@version above, so that the layer serves it.\n", platform.Name)
	return b.String()
}
