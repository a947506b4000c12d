// Package build turns a node of the config into a wasip1 module: it runs go build with
// GOOS=wasip1, writes the build overlay (seedfall's net package for net_overlay, the
// patched runtime of interleave, the patched dependency files of patches) and, for patched files in the module cache,
// patched copies of their modules with a -modfile that points at them.
//
// It owns the cache directories "wasm", "overlay" and their contents under CacheDir. It
// may not edit the user's files, go.mod or the module cache (patches go to copies), and
// it knows nothing of a run: the engine only hands it a Spec and gets a module path.
package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/seedfall/seedfall/engine/internal/cover"
	"github.com/seedfall/seedfall/engine/internal/gotool"
	"github.com/seedfall/seedfall/engine/internal/interleave"
	"github.com/seedfall/seedfall/engine/internal/overlay"
	"github.com/seedfall/seedfall/engine/internal/platform"
	"github.com/seedfall/seedfall/internal/cachedir"
)

// Error is a node package that did not compile; Output is the compiler's.
type Error struct {
	Node, Pkg string
	Output    string
	// Hint, when a dependency is what failed, names its module@version and the
	// identifiers the compiler found missing, and says what to do (hint.go).
	Hint string
}

func (e *Error) Error() string {
	return fmt.Sprintf("build node %q (%s) for wasip1 failed:\n%s%s", e.Node, e.Pkg, e.Hint, strings.TrimRight(e.Output, "\n"))
}

// CacheDir is where seedfall keeps built modules and wazero's compilation cache
// (internal/cachedir).
func CacheDir() string { return cachedir.Dir() }

// Spec is what building one node needs: the node's fields of the config and where the
// config lives.
type Spec struct {
	// Dir is the config's directory: go build, go list and go env run there.
	Dir string
	// ConfigPath is the config file; it names the node's overlay directory, so that
	// two configs with a node of the same name do not share one.
	ConfigPath string
	Name, Pkg  string
	// Test builds Pkg's test binary (go test -c) rather than a main package.
	Test       bool
	Tags       []string
	NetOverlay bool
	Patches    []string // unified diffs, relative to Dir
	// Interleave builds the node with the runtime of internal/interleave, whose
	// scheduler asks the host which ready goroutine runs next.
	Interleave bool
	// InterleaveFileOps adds the scheduling point before each file operation
	// (interleave's FileOps).
	InterleaveFileOps bool
	// Progress, if not nil, hears about a wait for another process building the
	// same inputs.
	Progress func(string)
	// Coverage, when set, builds the node with coverage instrumentation (the
	// config's "coverage"): its flags, and the hook file of internal/cover in the
	// overlay.
	Coverage Coverage
}

// Coverage is what a coverage build needs of the config's coverage settings.
type Coverage interface {
	// Flags are the go build flags that instrument the build of main package pkg.
	Flags(pkg string) []string
	// Output sees the go command's output (which names patterns that matched nothing).
	Output(out string)
}

// verifyOverlay checks that a built module got an overlay, by handing its imports as
// "module.name" strings to that overlay's check (cover.VerifyBuild, interleave.VerifyBuild).
func verifyOverlay(wasm []byte, check func(imports []string) error) error {
	ims, err := overlay.Imports(wasm)
	if err != nil {
		return err
	}
	names := make([]string, len(ims))
	for i, im := range ims {
		names[i] = im.String()
	}
	return check(names)
}

// Node compiles one node's package to a wasip1 module and returns its path in the
// cache (named by content hash, so identical builds share one file). A package that
// does not compile is an *Error.
func Node(ctx context.Context, n Spec) (string, error) {
	cache := CacheDir()
	if err := os.MkdirAll(filepath.Join(cache, "wasm"), 0o755); err != nil {
		return "", fmt.Errorf("cache dir: %w", err)
	}
	pkg := n.Pkg
	if !strings.HasPrefix(pkg, ".") && !strings.HasPrefix(pkg, "/") && !strings.Contains(pkg, ".") {
		pkg = "./" + pkg
	}
	flags := []string{"-trimpath", "-buildvcs=false"}
	if len(n.Tags) > 0 {
		flags = append(flags, "-tags", strings.Join(n.Tags, ","))
	}
	if n.Coverage != nil {
		flags = append(flags, n.Coverage.Flags(pkg)...)
	}
	// Unchanged inputs name the module built before (inputs.go). A key that cannot be
	// computed only means building.
	verb := []string{"build"}
	if n.Test {
		verb = []string{"test", "-c"}
	}
	key, keyErr := inputsKey(n, append(append(append([]string(nil), verb...), flags...), pkg))
	reuse := func() (string, bool) {
		p, rec, ok := lookupBuilt(cache, key)
		if !ok {
			return "", false
		}
		if n.Coverage != nil {
			n.Coverage.Output(rec.Output)
		}
		// Reused: its modification time says when it was last used (cache prune).
		now := time.Now()
		os.Chtimes(p, now, now)
		builds.skipped.Add(1)
		return p, true
	}
	if keyErr == nil {
		if p, ok := reuse(); ok {
			return p, nil
		}
		// Another process building the same inputs (go test runs packages that build
		// one guest side by side) is waited for, and its build reused.
		unlock, err := cachedir.Lock(ctx, recordPath(cache, key)+".lock", func() {
			if n.Progress != nil {
				n.Progress(fmt.Sprintf("waiting for another seedfall process that builds %s (%s)", n.Name, n.Pkg))
			}
		})
		if err != nil {
			return "", err
		}
		defer unlock()
		if p, ok := reuse(); ok {
			return p, nil
		}
	}
	builds.ran.Add(1)
	tmp, err := os.CreateTemp(filepath.Join(cache, "wasm"), "build-*.wasm")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	// A package whose Linux files do not build here (they call a Linux function of
	// package syscall that the platform layer lacks) falls back to the files wasip1
	// selects, as before the personality: the build is tried again without it.
	fallback := map[string]bool{}
	var out bytes.Buffer
	for attempt := 0; ; attempt++ {
		args := append(append(append([]string(nil), verb...), "-o", tmp.Name()), flags...)
		// Every build has an overlay: the wasip1 platform layer's (internal/platform).
		tc := gotool.Toolchain{Go: "go"}
		var changed map[string][]string
		{
			if tc, err = toolchainFor(n.Dir); err != nil {
				return "", fmt.Errorf("build node %q: %w", n.Name, err)
			}
			ov, modfile, ch, err := writeOverlay(n, tc.GOROOT, fallback)
			if err != nil {
				return "", err
			}
			changed = ch
			args = append(args, "-overlay", ov)
			if modfile != "" {
				args = append(args, "-modfile", modfile)
			}
		}
		args = append(args, pkg)
		cmd := exec.CommandContext(ctx, tc.Go, args...)
		cmd.Dir = n.Dir
		cmd.Env = append(append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"), tc.Env...)
		out.Reset()
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return "", fmt.Errorf("build node %q: %w", n.Name, err)
		}
		more := false
		for _, p := range failedPackages(out.String()) {
			if _, ok := changed[p]; ok && !fallback[p] && attempt < maxFallbackRounds {
				fallback[p] = true
				more = true
			}
		}
		if more {
			builds.fallbacks.Add(1)
			continue
		}
		e := &Error{Node: n.Name, Pkg: n.Pkg, Output: out.String()}
		if deps, err := listDeps(n); err == nil {
			main := ""
			if gomod, err := goEnv(n.Dir, "GOMOD"); err == nil {
				main = modulePath(gomod)
			}
			e.Hint = hint(e.Output, deps, main)
		}
		return "", e
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil {
		return "", err
	}
	if n.NetOverlay {
		if err := overlay.VerifyImports(data); err != nil {
			return "", fmt.Errorf("build node %q with net_overlay: %w", n.Name, err)
		}
	}
	if n.Interleave {
		if err := verifyOverlay(data, interleave.VerifyBuild); err != nil {
			return "", fmt.Errorf("build node %q with interleave: %w", n.Name, err)
		}
	}
	if n.Coverage != nil {
		n.Coverage.Output(out.String())
		if err := verifyOverlay(data, cover.VerifyBuild); err != nil {
			return "", fmt.Errorf("build node %q with coverage: %w", n.Name, err)
		}
	}
	sum := sha256.Sum256(data)
	dst := filepath.Join(cache, "wasm", hex.EncodeToString(sum[:12])+".wasm")
	if _, err := os.Stat(dst); err != nil {
		if err := os.Rename(tmp.Name(), dst); err != nil {
			return "", err
		}
	} else {
		// Reused: its modification time says when it was last used, so that
		// `seedfall cache prune -max-size` evicts the builds no one uses any more.
		now := time.Now()
		os.Chtimes(dst, now, now)
	}
	// Recorded only if the inputs did not change while go build read them.
	if keyErr == nil {
		if again, err := inputsKey(n, append(append(append([]string(nil), verb...), flags...), pkg)); err == nil && again == key {
			storeBuilt(cache, key, dst, out.String())
		}
	}
	return dst, nil
}

// builds counts go build runs and skips in this process, and the builds tried again
// with a package back on wasip1's files, for tests.
var builds struct{ ran, skipped, fallbacks atomic.Int64 }

// maxFallbackRounds bounds how often a build is tried again with packages back on
// wasip1's files.
const maxFallbackRounds = 8

// Fallbacks returns how many builds in this process were tried again with a package
// whose Linux files did not build back on wasip1's files.
func Fallbacks() int64 { return builds.fallbacks.Load() }

// failedPackages are the import paths the go command's output names in its "# pkg"
// headers (a test variant "pkg [pkg.test]" as pkg).
func failedPackages(output string) []string {
	var out []string
	for _, line := range strings.Split(output, "\n") {
		if m := pkgHeader.FindStringSubmatch(line); m != nil {
			p, _, _ := strings.Cut(m[1], " ")
			out = append(out, p)
		}
	}
	return out
}

// Counts returns how many node builds ran go build and how many were skipped because
// their inputs were unchanged, in this process.
func Counts() (ran, skipped int64) { return builds.ran.Load(), builds.skipped.Load() }

// writeOverlay writes the build overlay for a node: seedfall's net package (net_overlay)
// and patched dependency files (patches). Patched files of modules in the module cache,
// which an overlay may not replace, go to patched copies of their modules instead, and
// modfile is then the -modfile that points the build at them. root is the GOROOT the
// build runs with (toolchainFor).
func writeOverlay(n Spec, root string, fallback map[string]bool) (ovPath, modfile string, changed map[string][]string, err error) {
	dir := filepath.Join(CacheDir(), "overlay", n.Name+"-"+shortHash(n.ConfigPath))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", nil, err
	}
	replace := map[string]string{}
	if n.NetOverlay {
		ovPath, err := overlay.Write(filepath.Join(dir, "net"), root)
		if err != nil {
			return "", "", nil, fmt.Errorf("build node %q: %w", n.Name, err)
		}
		raw, err := os.ReadFile(ovPath)
		if err != nil {
			return "", "", nil, err
		}
		var ov struct{ Replace map[string]string }
		if err := json.Unmarshal(raw, &ov); err != nil {
			return "", "", nil, fmt.Errorf("net overlay: %w", err)
		}
		for k, v := range ov.Replace {
			replace[k] = v
		}
	}
	if n.Coverage != nil {
		orig, repl, err := cover.WriteOverlayFile(filepath.Join(dir, "cover"), root)
		if err != nil {
			return "", "", nil, err
		}
		replace[orig] = repl
	}
	if n.Interleave {
		files, err := interleave.WriteOverlay(filepath.Join(dir, "interleave"), root, n.InterleaveFileOps)
		if err != nil {
			return "", "", nil, fmt.Errorf("build node %q: %w", n.Name, err)
		}
		for orig, repl := range files {
			replace[orig] = repl
		}
	}
	// The wasip1 platform layer: syscall's additions for every build, and the ports of
	// the dependencies this build imports (internal/platform).
	sysFiles, err := platform.WriteGOROOT(filepath.Join(dir, "platform"), root)
	if err != nil {
		return "", "", nil, fmt.Errorf("build node %q: %w", n.Name, err)
	}
	for k, v := range sysFiles {
		replace[k] = v
	}
	deps, err := listDeps(n)
	if err != nil {
		return "", "", nil, fmt.Errorf("build node %q: %w", n.Name, err)
	}
	// The Linux personality first: it may take files that import packages the wasip1
	// build did not (internal/platform, linux.go).
	pers, deps, err := personality(n, root, deps, fallback)
	if err != nil {
		return "", "", nil, fmt.Errorf("build node %q: %w", n.Name, err)
	}
	depMods := map[string]platform.Module{}
	for _, d := range deps {
		if !d.Standard {
			depMods[d.ImportPath] = d.Module
		}
	}
	portFiles, err := platform.Files(depMods, func(pkg string) (platform.Module, bool, error) { return listModule(n, pkg) })
	if err != nil {
		return "", "", nil, fmt.Errorf("build node %q: %w", n.Name, err)
	}
	for f, content := range pers.Files {
		if _, both := portFiles[f]; both {
			return "", "", nil, fmt.Errorf("build node %q: %s: both a port and the Linux personality change %s", n.Name, platform.Name, f)
		}
		portFiles[f] = content
	}
	modcache := ""
	mods := map[string]*patchedModule{}
	if len(n.Patches) > 0 || len(portFiles) > 0 {
		if modcache, err = goEnv(n.Dir, "GOMODCACHE"); err != nil {
			return "", "", nil, err
		}
	}
	// Entries apply in order: one that edits a file an earlier entry edited patches the
	// earlier result, so that the two compose instead of the later silently winning. The
	// ports come first: a patch is written against the dependency as it builds for wasip1.
	patched := map[string][]byte{}
	editedBy := map[string]string{}
	steps := make([]string, 0, len(n.Patches)+1)
	if len(portFiles) > 0 {
		steps = append(steps, "")
	}
	steps = append(steps, n.Patches...)
	for si, patch := range steps {
		i := si
		if len(portFiles) > 0 {
			i--
		}
		var files map[string][]byte
		if i < 0 {
			files = portFiles
		} else if files, err = applyPatch(n, PatchPath(n.Dir, patch), patched, editedBy); err != nil {
			return "", "", nil, fmt.Errorf("node %q patches[%d] (%s): %w", n.Name, i, patch, err)
		}
		by := fmt.Sprintf("patches[%d] (%s)", i, patch)
		if i < 0 {
			by = "seedfall's wasip1 ports (docs/overlay.md)"
		}
		// Record every edited file before splitModCache takes the module cache's out of
		// files: a later entry must patch those on top of this one too.
		for orig, content := range files {
			patched[orig] = content
			editedBy[orig] = by
		}
		inCache, err := splitModCache(modcache, files)
		if err != nil {
			return "", "", nil, fmt.Errorf("node %q %s: %w", n.Name, by, err)
		}
		for d, m := range inCache {
			if prev := mods[d]; prev != nil {
				for f, c := range m.files {
					prev.files[f] = c
				}
			} else {
				mods[d] = m
			}
		}
		for orig, content := range files {
			if platform.IsRemoved(content) {
				replace[orig] = "" // the overlay's way to leave a file out
				continue
			}
			p := filepath.Join(dir, "patched", shortHash(orig)+"-"+filepath.Base(orig))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", "", nil, err
			}
			if err := os.WriteFile(p, content, 0o644); err != nil {
				return "", "", nil, err
			}
			replace[orig] = p
		}
	}
	if len(mods) > 0 {
		// A module the main go.mod replaces with another version of itself is replaced
		// by its copy at the version the build list selects: a replace that names a
		// version wins over one that does not.
		for _, d := range deps {
			if m := mods[d.Module.Dir]; m != nil && d.Module.Required != "" && d.Module.Required != m.version {
				m.required = d.Module.Required
			}
		}
		if modfile, err = writePatchedModules(n, dir, mods); err != nil {
			return "", "", nil, fmt.Errorf("node %q patches: %w", n.Name, err)
		}
	}
	raw, err := json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "  ")
	if err != nil {
		return "", "", nil, err
	}
	p := filepath.Join(dir, "overlay.json")
	return p, modfile, pers.Changed, os.WriteFile(p, raw, 0o644)
}

// personality returns the Linux personality's files for a build whose packages are
// deps, and deps with the packages those files import that the wasip1 build did not.
func personality(n Spec, goroot string, deps []platform.Pkg, fallback map[string]bool) (*platform.PersonalityResult, []platform.Pkg, error) {
	version, err := goEnv(n.Dir, "GOVERSION")
	if err != nil {
		return nil, nil, err
	}
	ctx := platform.Context{Tags: n.Tags, GoVersion: version, GOROOT: goroot, Keep: fallback}
	have := map[string]bool{}
	for _, d := range deps {
		have[d.ImportPath] = true
	}
	for round := 0; ; round++ {
		res, err := platform.Personality(deps, ctx)
		if err != nil {
			return nil, nil, err
		}
		var missing []string
		for _, imp := range res.Imports {
			if !have[imp] {
				missing = append(missing, imp)
			}
		}
		if len(missing) == 0 || round > 20 {
			return res, deps, nil
		}
		more, err := listPkgs(n, missing)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range more {
			if !have[p.ImportPath] && !p.Standard {
				have[p.ImportPath] = true
				deps = append(deps, p)
			}
		}
		for _, imp := range missing {
			have[imp] = true // even if the build cannot import it: the compiler says so
		}
	}
}

// toolchainFor is the toolchain that builds in dir, as `go env` there names it
// (internal/gotool).
func toolchainFor(dir string) (gotool.Toolchain, error) {
	env, err := goEnvAll(dir)
	if err != nil {
		return gotool.Toolchain{}, err
	}
	return gotool.Resolve(env.vars["GOROOT"], env.vars["GOMODCACHE"], CacheDir())
}

// modulePath is the module path a go.mod declares ("" if it cannot be read).
func modulePath(gomod string) string {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}
