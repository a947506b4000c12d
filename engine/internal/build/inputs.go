package build

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/seedfall/seedfall/engine/internal/cover"
	"github.com/seedfall/seedfall/engine/internal/interleave"
	"github.com/seedfall/seedfall/engine/internal/overlay"
	"github.com/seedfall/seedfall/engine/internal/platform"
)

// A node's build is skipped when the hash of its inputs names a module built before
// (the record under cache/wasm/inputs). `go build` with a warm Go build cache still
// loads the module graph and hashes every file of every package, which for a node with
// hundreds of dependencies takes seconds; the inputs hash takes one `go env` and a walk
// of the node's own module.
//
// The inputs are:
//   - the go command's environment for GOOS=wasip1 (`go env -json`: the toolchain's
//     version and GOROOT, GOFLAGS, GOEXPERIMENT, GOMOD, GOWORK, ...);
//   - the node's package, tags, net_overlay, interleave, coverage flags, and the patch
//     files' contents, and seedfall's own overlay files (net package, coverage hooks,
//     interleave runtime);
//   - every file of the main module's tree, of each directory a go.mod replace points
//     at, and of go.work and each of its use directories: by content, so that touching
//     a file without changing it does not rebuild. Nested modules, directories whose
//     names start with "." and _test.go files (which go build does not read; but the
//     main module's count for a test binary, go test -c) are left out, and files over
//     largeFile are hashed by size and modification time instead.
//
// Dependencies in the module cache are immutable and named by go.mod and go.sum, which
// are hashed. Editing the toolchain's GOROOT in place is not noticed.

// inputsVersion changes when the key's recipe changes.
const inputsVersion = "seedfall-build-inputs-v3"

// largeFile is the size above which a module file is hashed by size and modification
// time rather than content.
const largeFile = 4 << 20

var (
	goEnvMu sync.Mutex
	goEnvs  = map[string]*goEnvResult{} // directory -> `go env -json` there, for wasip1
)

type goEnvResult struct {
	vars map[string]string
}

// goEnvAll runs `go env -json` for GOOS=wasip1 in dir, once per process and directory.
// A go.mod there may select another toolchain (GOTOOLCHAIN), so the answer is per
// directory.
func goEnvAll(dir string) (*goEnvResult, error) {
	goEnvMu.Lock()
	defer goEnvMu.Unlock()
	if r, ok := goEnvs[dir]; ok {
		return r, nil
	}
	cmd := exec.Command("go", "env", "-json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env in %s: %w: %s (is the Go toolchain installed and on PATH?)", dir, err, strings.TrimSpace(stderr.String()))
	}
	r := &goEnvResult{vars: map[string]string{}}
	if err := json.Unmarshal(out, &r.vars); err != nil {
		return nil, fmt.Errorf("go env -json in %s: %w", dir, err)
	}
	goEnvs[dir] = r
	return r, nil
}

// goEnv returns one variable of `go env` for wasip1 in dir.
func goEnv(dir, name string) (string, error) {
	r, err := goEnvAll(dir)
	if err != nil {
		return "", err
	}
	return r.vars[name], nil
}

// inputsKey hashes everything the build of n reads (see above). args are the go build
// arguments that do not name temporary files.
func inputsKey(n Spec, args []string) (string, error) {
	env, err := goEnvAll(n.Dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", inputsVersion)
	// All of go env but GOGCCFLAGS, which names a fresh temporary directory each time
	// (and cgo is off).
	for _, k := range sortedKeys(env.vars) {
		if k != "GOGCCFLAGS" {
			writeField(h, "env "+k, []byte(env.vars[k]))
		}
	}
	writeField(h, "dir", []byte(n.Dir))
	writeField(h, "args", []byte(strings.Join(args, "\x00")))
	writeField(h, "pkg", []byte(n.Pkg))
	writeField(h, "tags", []byte(strings.Join(n.Tags, ",")))
	writeField(h, "platform", []byte(platform.Fingerprint()))
	if n.NetOverlay {
		writeField(h, "net_overlay", []byte(overlay.Fingerprint()))
	}
	if n.Coverage != nil {
		writeField(h, "coverage", []byte(cover.Fingerprint()))
	}
	if n.Interleave {
		writeField(h, "interleave", []byte(interleave.Fingerprint(n.InterleaveFileOps)))
	}
	for _, p := range n.Patches {
		data, err := os.ReadFile(PatchPath(n.Dir, p))
		if err != nil {
			return "", err
		}
		writeField(h, "patch "+p, data)
	}
	var roots []string
	modDir := ""
	if gomod := env.vars["GOMOD"]; gomod != "" && gomod != os.DevNull {
		modDir = filepath.Dir(gomod)
		roots = append(roots, modDir)
		dirs, err := localDirs(gomod, "replace")
		if err != nil {
			return "", err
		}
		roots = append(roots, dirs...)
	}
	if gowork := env.vars["GOWORK"]; gowork != "" && gowork != "off" {
		roots = append(roots, filepath.Dir(gowork))
		dirs, err := localDirs(gowork, "use")
		if err != nil {
			return "", err
		}
		roots = append(roots, dirs...)
		dirs, err = localDirs(gowork, "replace")
		if err != nil {
			return "", err
		}
		roots = append(roots, dirs...)
	}
	sort.Strings(roots)
	seen := map[string]bool{}
	for _, r := range roots {
		if seen[r] {
			continue
		}
		seen[r] = true
		// A test binary reads the _test.go files of its package, which is in the main
		// module.
		if err := hashTree(h, r, n.Test && r == modDir); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func writeField(h hash.Hash, name string, data []byte) {
	fmt.Fprintf(h, "%s %d\n", name, len(data))
	h.Write(data)
}

// localDirs returns the absolute directories that a go.mod's replace directives (or a
// go.work's use or replace directives) name on the local file system: paths that start
// with "./", "../" or "/".
func localDirs(file, verb string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	base := filepath.Dir(file)
	var out []string
	block := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if block {
			if f[0] == ")" {
				block = false
				continue
			}
		} else if f[0] == verb {
			if len(f) >= 2 && f[1] == "(" {
				block = true
				continue
			}
			f = f[1:]
		} else {
			continue
		}
		// A replace's target is after "=>"; a use is its only field.
		target := ""
		if verb == "replace" {
			for i, x := range f {
				if x == "=>" && i+1 < len(f) {
					target = f[i+1]
				}
			}
		} else if len(f) > 0 {
			target = f[0]
		}
		target = strings.Trim(target, `"`)
		if strings.HasPrefix(target, "./") || strings.HasPrefix(target, "../") || filepath.IsAbs(target) || target == "." || target == ".." {
			p := target
			if !filepath.IsAbs(p) {
				p = filepath.Join(base, p)
			}
			out = append(out, filepath.Clean(p))
		}
	}
	return out, sc.Err()
}

// hashTree hashes the files of the module rooted at root: names, and contents (size
// and modification time for files over largeFile). It does not descend into nested
// modules (directories with their own go.mod) or directories whose names start with
// ".". _test.go files count only with tests (a test binary's build, go test -c). A
// missing root hashes as missing: go build then reports it.
func hashTree(h hash.Hash, root string, tests bool) error {
	fmt.Fprintf(h, "tree %s\n", root)
	st, err := os.Stat(root)
	if err != nil {
		fmt.Fprintf(h, "missing\n")
		return nil
	}
	if !st.IsDir() {
		fmt.Fprintf(h, "not a directory\n")
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if p == root {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(h, "link %s -> %s\n", rel, target)
		case strings.HasSuffix(d.Name(), "_test.go") && !tests:
			// go build never reads a test file (go test -c does).
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if info.Size() > largeFile {
				fmt.Fprintf(h, "large %s %d %d\n", rel, info.Size(), info.ModTime().UnixNano())
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			fmt.Fprintf(h, "file %s %d\n", rel, info.Size())
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// builtRecord is what cache/wasm/inputs/<key> holds: the module built from those
// inputs and the go command's output (coverage reads it).
type builtRecord struct {
	Wasm   string `json:"wasm"` // file name under cache/wasm
	Output string `json:"output"`
}

func recordPath(cache, key string) string {
	return filepath.Join(cache, "wasm", "inputs", key+".json")
}

// lookupBuilt returns the module recorded for key, if its file is still there.
func lookupBuilt(cache, key string) (path string, rec builtRecord, ok bool) {
	data, err := os.ReadFile(recordPath(cache, key))
	if err != nil {
		return "", rec, false
	}
	if json.Unmarshal(data, &rec) != nil || rec.Wasm == "" || rec.Wasm != filepath.Base(rec.Wasm) {
		return "", rec, false
	}
	p := filepath.Join(cache, "wasm", rec.Wasm)
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return "", rec, false
	}
	return p, rec, true
}

// storeBuilt records that key built the module at wasmPath (under cache/wasm).
func storeBuilt(cache, key, wasmPath, output string) error {
	dir := filepath.Join(cache, "wasm", "inputs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.Marshal(builtRecord{Wasm: filepath.Base(wasmPath), Output: output})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "record-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), recordPath(cache, key))
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}
