// Command nativerun runs a Go program natively, on the host, with an example's library
// patches applied the way seedfall applies them: as a build overlay over the module
// cache (which is never edited). It is how the native reproductions of docs/findings.md
// are run against the patched library.
//
//	cd examples/pogreb
//	go run github.com/seedfall/seedfall/examples/nativerun -patch patches/fix-recovery-truncate.patch ./native/recovery-hole
//
// Each -patch is a unified diff with import-path file names ("--- a/github.com/x/y/f.go"),
// as in examples/*/patches. The files are located with `go list` in the current module,
// their modules copied from the module cache to a temporary directory and patched there
// with `git apply`, and `go run` builds against the copies through a temporary go.mod
// with replace directives (an overlay may not replace files in the module cache).
// Without -patch it is plain `go run`.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

type patches []string

func (p *patches) String() string     { return strings.Join(*p, ",") }
func (p *patches) Set(s string) error { *p = append(*p, s); return nil }

func main() {
	var ps patches
	flag.Var(&ps, "patch", "unified diff `file` to apply (repeatable; two patches may not edit the same file)")
	build := flag.String("o", "", "build the program to `file` instead of running it (to run it under strace)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: nativerun [-patch file]... [-o file] package [args...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	code, err := run(ps, *build, flag.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "nativerun: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(ps []string, build string, args []string) (int, error) {
	tmp, err := os.MkdirTemp("", "nativerun-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	mods := map[string]*module{}
	for _, p := range ps {
		if err := apply(p, tmp, mods); err != nil {
			return 0, err
		}
	}
	goArgs := []string{"run"}
	if build != "" {
		if len(args) != 1 {
			return 0, fmt.Errorf("-o builds one package and takes no program arguments")
		}
		goArgs = []string{"build", "-o", build}
	}
	if len(mods) > 0 {
		// Files in the module cache cannot be overlaid: point the build at the
		// patched copies with a temporary go.mod, as seedfall does.
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			return 0, fmt.Errorf("go env GOMOD: %v", err)
		}
		gomod := strings.TrimSpace(string(out))
		if gomod == "" || gomod == os.DevNull {
			return 0, fmt.Errorf("not in a module: run nativerun from the example's directory")
		}
		modfile := filepath.Join(tmp, "go.mod")
		for _, f := range [][2]string{{gomod, modfile}, {strings.TrimSuffix(gomod, ".mod") + ".sum", strings.TrimSuffix(modfile, ".mod") + ".sum"}} {
			data, err := os.ReadFile(f[0])
			if err != nil {
				return 0, err
			}
			if err := os.WriteFile(f[1], data, 0o644); err != nil {
				return 0, err
			}
		}
		edit := []string{"mod", "edit", "-modfile", modfile}
		for _, m := range mods {
			edit = append(edit, "-replace", m.path+"@"+m.version+"="+m.copy)
		}
		if out, err := exec.Command("go", edit...).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go %s: %v\n%s", strings.Join(edit, " "), err, out)
		}
		goArgs = append(goArgs, "-modfile", modfile)
	}
	cmd := exec.Command("go", append(goArgs, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), nil
		}
		return 0, err
	}
	return 0, nil
}

// module is a writable copy of a module from the module cache.
type module struct {
	path, version, dir, copy string
	patched                  map[string]bool
}

// apply patches copies of the modules the patch edits (copied into tmp the first time).
func apply(patch, tmp string, mods map[string]*module) error {
	data, err := os.ReadFile(patch)
	if err != nil {
		return err
	}
	var m *module
	var rewritten []string
	for _, line := range strings.Split(string(data), "\n") {
		for _, pre := range []string{"--- a/", "+++ b/"} {
			name, ok := strings.CutPrefix(line, pre)
			if !ok {
				continue
			}
			if m == nil {
				out, err := exec.Command("go", "list", "-f", "{{.Module.Path}}\t{{.Module.Version}}\t{{.Module.Dir}}", path.Dir(name)).Output()
				if err != nil {
					return fmt.Errorf("%s: locate package %s: %v", patch, path.Dir(name), err)
				}
				f := strings.Split(strings.TrimSpace(string(out)), "\t")
				if len(f) != 3 || f[1] == "" {
					return fmt.Errorf("%s: package %s is not in a versioned module (go list printed %q)", patch, path.Dir(name), out)
				}
				if m = mods[f[0]]; m == nil {
					m = &module{path: f[0], version: f[1], dir: f[2], copy: filepath.Join(tmp, "mod", strings.ReplaceAll(f[0], "/", "_")), patched: map[string]bool{}}
					if err := copyTree(m.dir, m.copy); err != nil {
						return err
					}
					mods[m.path] = m
				}
			}
			rel, ok := strings.CutPrefix(name, m.path+"/")
			if !ok {
				return fmt.Errorf("%s: %s is not in module %s (one module per patch)", patch, name, m.path)
			}
			if pre == "--- a/" {
				if m.patched[rel] {
					return fmt.Errorf("%s: %s is already patched by an earlier -patch (patches of one file do not compose)", patch, name)
				}
				m.patched[rel] = true
			}
			line = pre + rel
		}
		rewritten = append(rewritten, line)
	}
	if m == nil {
		return fmt.Errorf("%s names no file (want \"--- a/<import path>/<file>\")", patch)
	}
	cmd := exec.Command("git", "apply", "-p1", "-")
	cmd.Dir = m.copy
	cmd.Stdin = strings.NewReader(strings.Join(rewritten, "\n"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s does not apply to %s@%s: %v\n%s", patch, m.path, m.version, err, out)
	}
	return nil
}

// copyTree copies the regular files under src to dst, writable.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
}
