package engine

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// profileSources maps the file names in the guests' symbol tables to files on this
// machine, so that `go tool pprof -list` shows source without -trim_path or
// -source_path. Guests are built with -trimpath, which records "import/path/file.go"
// for the packages of the config's module and the standard library, and
// "module@version/dir/file.go" for dependencies.
type profileSources struct {
	dirs map[string]string // import path -> package directory
}

// loadProfileSources asks `go list -deps` where every package of every node's build is,
// for the target the nodes are built for. A node whose packages cannot be listed keeps
// the recorded names.
func loadProfileSources(cfg *Config) *profileSources {
	ps := &profileSources{dirs: map[string]string{}}
	for _, n := range cfg.AllNodes() {
		dir, pkg := pkgModule(cfg.Dir, n.Pkg)
		if !strings.HasPrefix(pkg, ".") && !strings.HasPrefix(pkg, "/") && !strings.Contains(pkg, ".") {
			pkg = "./" + pkg
		}
		args := []string{"list", "-deps", "-f", "{{.ImportPath}}\t{{.Dir}}"}
		if len(n.Tags) > 0 {
			args = append(args, "-tags", strings.Join(n.Tags, ","))
		}
		cmd := exec.Command("go", append(args, pkg)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if imp, dir, ok := strings.Cut(sc.Text(), "\t"); ok && dir != "" {
				ps.dirs[imp] = dir
			}
		}
	}
	return ps
}

// resolve returns the file on this machine that a guest's file name stands for, or the
// name unchanged when there is none.
func (ps *profileSources) resolve(file string) string {
	if ps == nil || file == "" || filepath.IsAbs(file) {
		return file
	}
	dir, base := path.Dir(file), path.Base(file)
	if i := strings.Index(dir, "@"); i >= 0 { // module@version/dir: drop the version
		if j := strings.Index(dir[i:], "/"); j >= 0 {
			dir = dir[:i] + dir[i+j:]
		} else {
			dir = dir[:i]
		}
	}
	d, ok := ps.dirs[dir]
	if !ok {
		return file
	}
	p := filepath.Join(d, base)
	if _, err := os.Stat(p); err != nil {
		return file
	}
	return p
}
