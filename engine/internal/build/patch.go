package build

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine/internal/platform"
)

// applyPatch reads a unified diff whose file names are import-path style
// ("--- a/github.com/tidwall/wal/wal.go", "+++ b/github.com/tidwall/wal/wal.go"),
// finds each file's package in the node's module graph with `go list`, applies the
// hunks, and returns the patched contents keyed by the original file's absolute path,
// for the build overlay. Dependencies are never edited in place. A file that an earlier
// entry of the node's patches already edited is patched on top of that edit: base maps
// such files to their contents so far, and editedBy to the entry that last edited them
// (named in the error when a hunk no longer applies).
func applyPatch(n Spec, patchPath string, base map[string][]byte, editedBy map[string]string) (map[string][]byte, error) {
	data, err := os.ReadFile(patchPath)
	if err != nil {
		return nil, err
	}
	files, err := parseUnifiedDiff(data)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range files {
		pkg := path.Dir(f.name)
		cmd := exec.Command("go", "list", "-f", "{{.Dir}}", pkg)
		cmd.Dir = n.Dir
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		dir, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("locate package %s for %s: %v: %s", pkg, f.name, err, strings.TrimSpace(stderr.String()))
		}
		orig := filepath.Join(strings.TrimSpace(string(dir)), path.Base(f.name))
		src, edited := out[orig]
		if !edited {
			src, edited = base[orig]
		}
		if !edited {
			if src, err = os.ReadFile(orig); err != nil {
				return nil, err
			}
		}
		patched, err := applyHunks(src, f.hunks)
		if err != nil {
			if by := editedBy[orig]; by != "" {
				return nil, fmt.Errorf("%s: %w, on top of %s, which edits the same file (patches apply in order: make this one a diff against the file as %s leaves it, or merge the two)", f.name, err, by, by)
			}
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		out[orig] = patched
	}
	return out, nil
}

type diffFile struct {
	name  string
	hunks []hunk
}

type hunk struct {
	oldStart int
	lines    []string // each with its ' ', '-' or '+' prefix
}

func parseUnifiedDiff(data []byte) ([]diffFile, error) {
	var files []diffFile
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur *diffFile
	var h *hunk
	lineNo := 0
	for sc.Scan() {
		lineNo++
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "--- "):
			h = nil
		case strings.HasPrefix(l, "+++ "):
			name := strings.TrimSpace(strings.TrimPrefix(l, "+++ "))
			if i := strings.IndexByte(name, '\t'); i >= 0 {
				name = name[:i]
			}
			name = strings.TrimPrefix(name, "b/")
			files = append(files, diffFile{name: name})
			cur = &files[len(files)-1]
			h = nil
		case strings.HasPrefix(l, "@@ "):
			if cur == nil {
				return nil, fmt.Errorf("line %d: hunk before a file header", lineNo)
			}
			var a, b string
			if _, err := fmt.Sscanf(l, "@@ %s %s @@", &a, &b); err != nil {
				return nil, fmt.Errorf("line %d: bad hunk header %q", lineNo, l)
			}
			start, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(a, "-"), ",", 2)[0])
			if err != nil {
				return nil, fmt.Errorf("line %d: bad hunk header %q", lineNo, l)
			}
			cur.hunks = append(cur.hunks, hunk{oldStart: start})
			h = &cur.hunks[len(cur.hunks)-1]
		case h != nil && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") || l == ""):
			if l == "" {
				l = " "
			}
			h.lines = append(h.lines, l)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no files in patch (want a unified diff with +++ b/<import path>/file.go headers)")
	}
	return files, sc.Err()
}

// applyHunks applies hunks in order; each must match its context exactly, near its
// stated line.
func applyHunks(src []byte, hunks []hunk) ([]byte, error) {
	lines := strings.SplitAfter(string(src), "\n")
	offset := 0
	for i, h := range hunks {
		var old, repl []string
		for _, l := range h.lines {
			switch l[0] {
			case ' ':
				old = append(old, l[1:])
				repl = append(repl, l[1:])
			case '-':
				old = append(old, l[1:])
			case '+':
				repl = append(repl, l[1:])
			}
		}
		want := h.oldStart - 1 + offset
		at := -1
		for d := 0; d < len(lines) && at < 0; d++ {
			for _, c := range []int{want - d, want + d} {
				if c >= 0 && c+len(old) <= len(lines) && matchAt(lines, c, old) {
					at = c
					break
				}
			}
		}
		if at < 0 {
			return nil, fmt.Errorf("hunk %d (line %d) does not apply", i+1, h.oldStart)
		}
		var nl []string
		for _, r := range repl {
			nl = append(nl, r+"\n")
		}
		lines = append(lines[:at], append(nl, lines[at+len(old):]...)...)
		offset += len(repl) - len(old)
	}
	return []byte(strings.Join(lines, "")), nil
}

func matchAt(lines []string, at int, old []string) bool {
	for i, o := range old {
		if strings.TrimRight(lines[at+i], "\n") != o {
			return false
		}
	}
	return true
}

// PatchedFiles applies the node's patches in order, as its build does, and returns the
// patched contents keyed by the original file's absolute path. Coverage uses it to show
// `go tool cover` the sources the node was built from.
func PatchedFiles(n Spec) (map[string][]byte, error) {
	patched := map[string][]byte{}
	editedBy := map[string]string{}
	for i, patch := range n.Patches {
		files, err := applyPatch(n, PatchPath(n.Dir, patch), patched, editedBy)
		if err != nil {
			return nil, fmt.Errorf("node %q patches[%d] (%s): %w", n.Name, i, patch, err)
		}
		for orig, content := range files {
			patched[orig] = content
			editedBy[orig] = fmt.Sprintf("patches[%d] (%s)", i, patch)
		}
	}
	return patched, nil
}

// listPkgs describes packages of the node's build and their dependencies for wasip1
// (go list -e -deps -json), each
// with the module it belongs to (after replace directives). A package the build cannot
// import at all is left out.
func listPkgs(n Spec, pkgs []string) ([]platform.Pkg, error) {
	args := []string{"list", "-e", "-deps", "-json=ImportPath,Dir,Module,Standard,Error"}
	if len(n.Tags) > 0 {
		args = append(args, "-tags", strings.Join(n.Tags, ","))
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = n.Dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", strings.Join(pkgs, " "), err, strings.TrimSpace(stderr.String()))
	}
	var list []platform.Pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPkg
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		if p.Module == nil || p.Module.Dir == "" || p.Dir == "" {
			if p.Standard && p.Dir != "" {
				list = append(list, platform.Pkg{ImportPath: p.ImportPath, Dir: p.Dir, Standard: true})
			}
			continue
		}
		list = append(list, platform.Pkg{ImportPath: p.ImportPath, Dir: p.Dir, Module: p.Module.module()})
	}
	return list, nil
}

// listModule returns the module of package pkg in the node's build, if the build can
// import it at all.
func listModule(n Spec, pkg string) (platform.Module, bool, error) {
	list, err := listPkgs(n, []string{pkg})
	if err != nil {
		return platform.Module{}, false, err
	}
	for _, p := range list {
		if p.ImportPath == pkg && !p.Standard {
			return p.Module, true, nil
		}
	}
	return platform.Module{}, false, nil
}

type listedPkg struct {
	ImportPath, Dir string
	Standard        bool
	ForTest         string
	Module          *listedModule
}

// listedModule is a module as go list -json describes it.
type listedModule struct {
	Path, Version, Dir string
	Replace            *listedModule
}

// module is m after its replace directive.
func (m *listedModule) module() platform.Module {
	out := platform.Module{Path: m.Path, Version: m.Version, Dir: m.Dir, Required: m.Version}
	if r := m.Replace; r != nil {
		out.Version, out.Dir = r.Version, r.Dir
	}
	return out
}

// listDeps returns the packages the node's binary imports, directly or not, for wasip1,
// each with the module it belongs to (after replace directives): what the platform
// layer's ports and the Linux personality are chosen by. For a test binary (go test -c)
// that is the test's imports too (go list -test), and the package under test builds its
// _test.go files (Tests). Packages of the standard library are left out.
func listDeps(n Spec) ([]platform.Pkg, error) {
	pkg := n.Pkg
	if !strings.HasPrefix(pkg, ".") && !strings.HasPrefix(pkg, "/") && !strings.Contains(pkg, ".") {
		pkg = "./" + pkg
	}
	args := []string{"list", "-e", "-deps", "-json=ImportPath,Dir,Module,Standard,ForTest"}
	if n.Test {
		args = append(args, "-test")
	}
	if len(n.Tags) > 0 {
		args = append(args, "-tags", strings.Join(n.Tags, ","))
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = n.Dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s: %v: %s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	var deps []platform.Pkg
	at := map[string]int{} // import path -> index in deps
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPkg
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list -deps %s: %w", pkg, err)
		}
		if p.Standard || p.Module == nil || p.Dir == "" {
			continue
		}
		// A test variant ("pkg [pkg.test]") is the package with its test files; the
		// test main ("pkg.test") is generated.
		path, _, _ := strings.Cut(p.ImportPath, " ")
		if strings.HasSuffix(path, ".test") && p.ForTest == "" {
			continue
		}
		tests := p.ForTest != "" && (path == p.ForTest || path == p.ForTest+"_test")
		path = strings.TrimSuffix(path, "_test")
		if i, ok := at[path]; ok {
			deps[i].Tests = deps[i].Tests || tests
			continue
		}
		at[path] = len(deps)
		deps = append(deps, platform.Pkg{ImportPath: path, Dir: p.Dir, Module: p.Module.module(), Tests: tests})
	}
	return deps, nil
}

// PatchPath is where patch p of a node built in dir is: p itself when absolute (the
// configs `seedfall test` derives name them so), else relative to dir.
func PatchPath(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
