package engine

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
	"sync"

	"github.com/seedfall/seedfall/engine/internal/cover"
	"github.com/seedfall/seedfall/engine/internal/overlay"
)

// BuildError is a node package that did not compile; Output is the compiler's.
type BuildError struct {
	Node, Pkg string
	Output    string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("build node %q (%s) for wasip1 failed:\n%s", e.Node, e.Pkg, strings.TrimRight(e.Output, "\n"))
}

// CacheDir is where seedfall keeps built modules and wazero's compilation cache:
// $SEEDFALL_CACHE, else the user cache directory.
func CacheDir() string {
	if d := os.Getenv("SEEDFALL_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "seedfall")
}

var (
	gorootMu sync.Mutex
	goroots  = map[string]string{} // directory -> `go env GOROOT` there
)

// goRoot returns `go env GOROOT` as the go command sees it in dir, where the node is
// built: a go.mod there may select another toolchain (GOTOOLCHAIN), and the overlay's
// keys must name the GOROOT of the toolchain that builds, or go build ignores them.
func goRoot(dir string) (string, error) {
	gorootMu.Lock()
	defer gorootMu.Unlock()
	if r, ok := goroots[dir]; ok {
		return r, nil
	}
	cmd := exec.Command("go", "env", "GOROOT")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w (is the Go toolchain installed and on PATH?)", err)
	}
	r := strings.TrimSpace(string(out))
	goroots[dir] = r
	return r, nil
}

// buildNode compiles one node's package to a wasip1 module and returns its path in the
// cache (named by content hash, so identical builds share one file).
func buildNode(ctx context.Context, cfg *Config, n NodeConfig) (string, error) {
	cache := CacheDir()
	if err := os.MkdirAll(filepath.Join(cache, "wasm"), 0o755); err != nil {
		return "", fmt.Errorf("cache dir: %w", err)
	}
	pkg := n.Pkg
	if !strings.HasPrefix(pkg, ".") && !strings.HasPrefix(pkg, "/") && !strings.Contains(pkg, ".") {
		pkg = "./" + pkg
	}
	tmp, err := os.CreateTemp(filepath.Join(cache, "wasm"), "build-*.wasm")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := []string{"build", "-trimpath", "-buildvcs=false", "-o", tmp.Name()}
	if len(n.Tags) > 0 {
		args = append(args, "-tags", strings.Join(n.Tags, ","))
	}
	if cfg.Coverage != nil {
		args = append(args, cfg.Coverage.buildFlags(pkg)...)
	}
	needOverlay := n.NetOverlay || len(n.Patches) > 0 || cfg.Coverage != nil
	if needOverlay {
		ov, modfile, err := writeOverlay(cfg, n)
		if err != nil {
			return "", err
		}
		args = append(args, "-overlay", ov)
		if modfile != "" {
			args = append(args, "-modfile", modfile)
		}
	}
	args = append(args, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = cfg.Dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", &BuildError{Node: n.Name, Pkg: n.Pkg, Output: out.String()}
		}
		return "", fmt.Errorf("build node %q: %w", n.Name, err)
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
	if cfg.Coverage != nil {
		cfg.Coverage.noteUnmatched(out.String())
		if err := verifyCoverageBuild(data); err != nil {
			return "", fmt.Errorf("build node %q with coverage: %w", n.Name, err)
		}
	}
	sum := sha256.Sum256(data)
	dst := filepath.Join(cache, "wasm", hex.EncodeToString(sum[:12])+".wasm")
	if _, err := os.Stat(dst); err != nil {
		if err := os.Rename(tmp.Name(), dst); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// writeOverlay writes the build overlay for a node: seedfall's net package (net_overlay)
// and patched dependency files (patches). Patched files of modules in the module cache,
// which an overlay may not replace, go to patched copies of their modules instead, and
// modfile is then the -modfile that points the build at them.
func writeOverlay(cfg *Config, n NodeConfig) (ovPath, modfile string, err error) {
	root, err := goRoot(cfg.Dir)
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(CacheDir(), "overlay", n.Name+"-"+shortHash(cfg.Path))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	replace := map[string]string{}
	if n.NetOverlay {
		ovPath, err := overlay.Write(filepath.Join(dir, "net"), root)
		if err != nil {
			return "", "", fmt.Errorf("net overlay: %w", err)
		}
		raw, err := os.ReadFile(ovPath)
		if err != nil {
			return "", "", err
		}
		var ov struct{ Replace map[string]string }
		if err := json.Unmarshal(raw, &ov); err != nil {
			return "", "", fmt.Errorf("net overlay: %w", err)
		}
		for k, v := range ov.Replace {
			replace[k] = v
		}
	}
	if cfg.Coverage != nil {
		orig, repl, err := cover.WriteOverlayFile(filepath.Join(dir, "cover"), root)
		if err != nil {
			return "", "", err
		}
		replace[orig] = repl
	}
	modcache := ""
	mods := map[string]*patchedModule{}
	if len(n.Patches) > 0 {
		if modcache, err = goEnv(cfg.Dir, "GOMODCACHE"); err != nil {
			return "", "", err
		}
	}
	for i, patch := range n.Patches {
		files, err := applyPatch(cfg, n, filepath.Join(cfg.Dir, patch))
		if err != nil {
			return "", "", fmt.Errorf("node %q patches[%d] (%s): %w", n.Name, i, patch, err)
		}
		inCache, err := splitModCache(modcache, files)
		if err != nil {
			return "", "", fmt.Errorf("node %q patches[%d] (%s): %w", n.Name, i, patch, err)
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
			p := filepath.Join(dir, "patched", shortHash(orig)+"-"+filepath.Base(orig))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return "", "", err
			}
			if err := os.WriteFile(p, content, 0o644); err != nil {
				return "", "", err
			}
			replace[orig] = p
		}
	}
	if len(mods) > 0 {
		if modfile, err = writePatchedModules(cfg, dir, mods); err != nil {
			return "", "", fmt.Errorf("node %q patches: %w", n.Name, err)
		}
	}
	raw, err := json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "  ")
	if err != nil {
		return "", "", err
	}
	p := filepath.Join(dir, "overlay.json")
	return p, modfile, os.WriteFile(p, raw, 0o644)
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}
