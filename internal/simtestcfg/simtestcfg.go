// Package simtestcfg finds the simulation tests (package simtest) of Go packages and
// derives, for each, the config that runs it: every node an instance of the package's
// test binary built for wasip1 (or a main package the test names), the workload one
// more, the faults the test declares. The config is written to the cache, so that every
// command that takes a config (run, replay, shrink, cause, crashes, explore, and the
// sweep's worker processes) runs a test as it runs a config.
package simtestcfg

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/cachedir"
	"github.com/seedfall/seedfall/internal/cli"
	"github.com/seedfall/seedfall/internal/simdecl"
)

// ImportPath is package simtest's.
const ImportPath = "github.com/seedfall/seedfall/simtest"

// Package is a directory with simulation tests.
type Package struct {
	Pkg   string   // as given ("./examples/pogreb/simtest")
	Dir   string   // absolute
	Tests []string // names of the test functions that call simtest.Run, sorted
}

// UsageError is bad input: seedfall test exits 2 with it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// Find returns the packages matching patterns (directories, "dir/..." for every
// package below dir across modules, or import paths) that hold simulation tests, with
// only the tests whose names match run (Go's -run, on the top-level name; "" matches
// all). No simulation test at all is a *UsageError.
func Find(patterns []string, run string) ([]Package, error) {
	var re *regexp.Regexp
	if run != "" {
		var err error
		if re, err = regexp.Compile(run); err != nil {
			return nil, usagef("-run %q: %v", run, err)
		}
	}
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	var out []Package
	seen := map[string]bool{}
	anyTests := false
	for _, pat := range patterns {
		dirs, err := expand(pat)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			if seen[d.Dir] {
				continue
			}
			seen[d.Dir] = true
			tests, err := scan(d.Dir)
			if err != nil {
				return nil, err
			}
			anyTests = anyTests || len(tests) > 0
			var keep []string
			for _, t := range tests {
				if re == nil || re.MatchString(t) {
					keep = append(keep, t)
				}
			}
			if len(keep) > 0 {
				d.Tests = keep
				out = append(out, d)
			}
		}
	}
	switch {
	case !anyTests:
		return nil, usagef("no simulation test (a Test function that calls simtest.Run) in %s", strings.Join(patterns, " "))
	case len(out) == 0:
		return nil, usagef("-run %q matches no simulation test in %s", run, strings.Join(patterns, " "))
	}
	return out, nil
}

// expand resolves one pattern to package directories.
func expand(pat string) ([]Package, error) {
	if root, ok := strings.CutSuffix(pat, "/..."); ok || pat == "..." {
		if pat == "..." {
			root = "."
		}
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, usagef("%s: no such directory", root)
		}
		var out []Package
		err = filepath.WalkDir(abs, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !de.IsDir() {
				return nil
			}
			name := de.Name()
			if p != abs && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			if hasTestFiles(p) {
				rel, _ := filepath.Rel(abs, p)
				shown := root
				if rel != "." {
					shown = root + "/" + filepath.ToSlash(rel)
				}
				out = append(out, Package{Pkg: dotSlash(shown), Dir: p})
			}
			return nil
		})
		return out, err
	}
	if isDirPattern(pat) {
		abs, err := filepath.Abs(pat)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, usagef("%s: no such directory", pat)
		}
		return []Package{{Pkg: dotSlash(pat), Dir: abs}}, nil
	}
	// An import path: go list knows its directory.
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", pat)
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return nil, usagef("%s: %s", pat, msg)
	}
	return []Package{{Pkg: pat, Dir: strings.TrimSpace(string(out))}}, nil
}

func isDirPattern(p string) bool {
	return p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || filepath.IsAbs(p)
}

func dotSlash(p string) string {
	if isDirPattern(p) {
		return p
	}
	return "./" + p
}

func hasTestFiles(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	return len(m) > 0
}

// scan returns the top-level Test functions of dir's test files that call simtest.Run,
// themselves or through functions of their package (a helper that runs a variant, or
// simtest.Schedule running another test).
func scan(dir string) ([]string, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	slices.Sort(files)
	fset := token.NewFileSet()
	type fn struct {
		direct bool
		calls  []string
		test   bool
	}
	fns := map[string]*fn{} // "package.name": a directory's test files may be two packages
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, usagef("%v", err)
		}
		name := ""
		for _, im := range af.Imports {
			if strings.Trim(im.Path.Value, `"`) == ImportPath {
				name = "simtest"
				if im.Name != nil {
					name = im.Name.Name
				}
			}
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil {
				continue
			}
			x := &fn{test: isTestName(fd.Name.Name)}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				ce, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch f := ce.Fun.(type) {
				case *ast.SelectorExpr:
					if id, ok := f.X.(*ast.Ident); ok && name != "" && id.Name == name && f.Sel.Name == "Run" {
						x.direct = true
					}
					// simtest.Schedule(t, TestX, ...) runs TestX (what shrink -emit-test
					// writes): as if it called it.
					if id, ok := f.X.(*ast.Ident); ok && name != "" && id.Name == name && f.Sel.Name == "Schedule" && len(ce.Args) >= 2 {
						if arg, ok := ce.Args[1].(*ast.Ident); ok {
							x.calls = append(x.calls, af.Name.Name+"."+arg.Name)
						}
					}
				case *ast.Ident:
					x.calls = append(x.calls, af.Name.Name+"."+f.Name)
				}
				return true
			})
			fns[af.Name.Name+"."+fd.Name.Name] = x
		}
	}
	// What reaches simtest.Run through the package's own functions, to a fixpoint.
	for changed := true; changed; {
		changed = false
		for _, x := range fns {
			if x.direct {
				continue
			}
			for _, c := range x.calls {
				if y := fns[c]; y != nil && y.direct {
					x.direct, changed = true, true
					break
				}
			}
		}
	}
	var tests []string
	for key, x := range fns {
		if x.test && x.direct {
			_, name, _ := strings.Cut(key, ".")
			tests = append(tests, name)
		}
	}
	slices.Sort(tests)
	return slices.Compact(tests), nil
}

func isTestName(s string) bool {
	rest, ok := strings.CutPrefix(s, "Test")
	return ok && (rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z'))
}

// Derived is one test's derived config.
type Derived struct {
	Ref  cli.TestRef
	Path string // the config file, in the cache
	// Kept says the description came from an earlier run of the same build: the test
	// binary was neither compiled nor run.
	Kept bool
}

// Derive builds p's test binary, has it describe its tests and writes each test's
// config, registered with cli.RegisterTest. progress may be nil. A declaration that is
// wrong (no workload, two nodes of one name) is a *UsageError.
func Derive(ctx context.Context, p Package, progress func(string)) ([]Derived, error) {
	dir := filepath.Join(cachedir.Dir(), "simtest", shortHash(p.Dir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	quoted := make([]string, len(p.Tests))
	for i, t := range p.Tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	describe := map[string]any{
		"workload": instance(p.Dir, "describe", simdecl.RoleDescribe, "^("+strings.Join(quoted, "|")+")$", nil),
		"horizon":  "60s",
	}
	dpath := filepath.Join(dir, "describe.json")
	if err := writeJSON(dpath, describe); err != nil {
		return nil, err
	}
	cfg, err := engine.LoadConfig(dpath)
	if err != nil {
		return nil, err
	}
	if progress != nil {
		progress(fmt.Sprintf("building %s's test binary for wasip1", p.Pkg))
	}
	desc, err := describeTests(ctx, dpath, cfg)
	var be *engine.BuildError
	if errors.As(err, &be) {
		return nil, fmt.Errorf("%s: the test binary does not build for wasip1:\n%s%s", p.Pkg, be.Hint, strings.TrimRight(be.Output, "\n"))
	}
	if err != nil {
		return nil, err
	}
	decls := map[string]simdecl.Test{}
	for _, js := range desc.Decls {
		var t simdecl.Test
		if err := json.Unmarshal([]byte(js), &t); err != nil {
			return nil, fmt.Errorf("%s: the test binary's declaration does not parse: %v", p.Pkg, err)
		}
		decls[t.Name] = t
	}
	var out []Derived
	for _, name := range p.Tests {
		t, ok := decls[name]
		if !ok {
			for n := range decls {
				if strings.HasPrefix(n, name+"/") {
					return nil, usagef("%s: %s calls simtest.Run in its subtest %s: call it from the test function itself (one simulation test per Test function)", p.Pkg, name, n)
				}
			}
			why := "it did not reach simtest.Run"
			if desc.Failure != "" {
				why = desc.Failure
			}
			return nil, usagef("%s: %s: the test binary did not describe it: %s", p.Pkg, name, why)
		}
		if len(t.Errors) > 0 {
			return nil, usagef("%s: %s: %s", p.Pkg, name, strings.Join(t.Errors, "; "))
		}
		cfg, err := config(p, t)
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, name+".json")
		if err := writeJSON(path, cfg); err != nil {
			return nil, err
		}
		if _, err := engine.LoadConfig(path); err != nil {
			return nil, usagef("%s: %s: %v", p.Pkg, name, err)
		}
		ref := cli.TestRef{Pkg: p.Pkg, Dir: p.Dir, Name: name}
		cli.RegisterTest(path, ref)
		if err := cli.WriteTestRef(path, ref); err != nil {
			return nil, err
		}
		out = append(out, Derived{Ref: ref, Path: path, Kept: desc.kept})
	}
	return out, nil
}

// description is what one describe run of a test binary said: each declaration line
// (simdecl.Marker's JSON) and the run's failure, if it had one.
type description struct {
	Key     string   `json:"key"`
	Decls   []string `json:"decls"`
	Failure string   `json:"failure,omitempty"`
	kept    bool
}

// describeTests runs the describe config at dpath once, or reads what the same run
// said before: a run is deterministic, so a description kept under the key of its
// build (the config, the test binary's wasm, seedfall and Go) is the one a new run
// would print. Knowing the build needs the build alone; only a new one is compiled.
func describeTests(ctx context.Context, dpath string, cfg *engine.Config) (*description, error) {
	built, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{BuildOnly: true})
	if err != nil {
		return nil, err
	}
	built.Close()
	data, err := os.ReadFile(dpath)
	if err != nil {
		return nil, err
	}
	prov, err := json.Marshal(built.Provenance(""))
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", len(data))
	h.Write(data)
	h.Write(prov)
	key := hex.EncodeToString(h.Sum(nil))
	kept := dpath + ".out"
	var d description
	if old, err := os.ReadFile(kept); err == nil && json.Unmarshal(old, &d) == nil && d.Key == key {
		d.kept = true
		return &d, nil
	}
	s, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	r := s.Run(ctx, 1, engine.RunOptions{Trace: true})
	d = description{Key: key}
	for _, line := range r.Trace {
		if _, js, ok := strings.Cut(line, "| "+simdecl.Marker); ok {
			d.Decls = append(d.Decls, js)
		}
	}
	if r.Failure != nil {
		d.Failure = r.Failure.Reason
	}
	if r.Error != "" || ctx.Err() != nil {
		// The run itself went wrong, or was stopped: what it said is used once, not kept.
		return &d, nil
	}
	if err := writeJSON(kept, d); err != nil {
		return nil, err
	}
	return &d, nil
}

// instance is a config node that is an instance of the test binary in role.
func instance(dir, name, role, run string, patches []string) map[string]any {
	n := map[string]any{
		"name": name, "pkg": dir, "test": true, "net_overlay": true,
		"args": []string{"-test.run=" + run},
		"env":  map[string]string{simdecl.RoleEnv: role},
	}
	if len(patches) > 0 {
		n["patches"] = patches
	}
	return n
}

// config is test t's config.
func config(p Package, t simdecl.Test) (map[string]any, error) {
	abs := func(ps []string) []string {
		var out []string
		for _, x := range ps {
			if !filepath.IsAbs(x) {
				x = filepath.Join(p.Dir, x)
			}
			out = append(out, x)
		}
		return out
	}
	run := "^" + regexp.QuoteMeta(t.Name) + "$"
	var nodes []any
	for _, n := range t.Nodes {
		if n.Pkg == "" {
			nodes = append(nodes, instance(p.Dir, n.Name, simdecl.RoleNodePrefix+n.Name, run, abs(t.Patches)))
			continue
		}
		pkg := n.Pkg
		if isDirPattern(pkg) {
			pkg = filepath.Join(p.Dir, pkg)
		} else {
			cmd := exec.Command("go", "list", "-f", "{{.Dir}}", pkg)
			cmd.Dir = p.Dir
			out, err := cmd.Output()
			if err != nil {
				return nil, usagef("%s: %s: node %q: package %s not found", p.Pkg, t.Name, n.Name, n.Pkg)
			}
			pkg = strings.TrimSpace(string(out))
		}
		bn := map[string]any{"name": n.Name, "pkg": pkg}
		if len(n.Args) > 0 {
			bn["args"] = n.Args
		}
		if ps := abs(n.Patches); len(ps) > 0 {
			bn["patches"] = ps
		}
		if n.NetOverlay {
			bn["net_overlay"] = true
		}
		nodes = append(nodes, bn)
	}
	cfg := map[string]any{
		"nodes":    nodes,
		"workload": instance(p.Dir, "workload", simdecl.RoleWorkload, run, abs(t.Patches)),
	}
	if len(t.Faults) > 0 && string(t.Faults) != "null" {
		cfg["faults"] = t.Faults
	}
	if t.HorizonNS > 0 {
		cfg["horizon"] = t.HorizonNS
	}
	if t.StrictDirs {
		cfg["strict_dirs"] = true
	}
	if len(t.Schedule) > 0 && string(t.Schedule) != "null" {
		cfg["schedule"] = t.Schedule
	}
	if t.MemoryLimitMiB > 0 {
		cfg["memory_limit_mib"] = t.MemoryLimitMiB
	}
	if t.Linearizability != "" {
		cfg["linearizability"] = map[string]string{"model": t.Linearizability}
	}
	return cfg, nil
}

// writeJSON writes v to path through a temporary file, so that two processes deriving
// one test never read half a file.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data)+"\n" {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*.json")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.Write(data)
	w.WriteByte('\n')
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}
