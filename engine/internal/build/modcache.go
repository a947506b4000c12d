package build

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"unicode"

	"github.com/seedfall/seedfall/engine/internal/platform"
)

// The go command refuses a build overlay that replaces a file beneath GOMODCACHE
// ("Files beneath GOMODCACHE must not be replaced"), and every patched dependency
// lives there. So a patched file of a module in the module cache is applied to a copy
// of that module under seedfall's cache, and the build uses a copy of the main
// module's go.mod (-modfile) that adds a replace directive pointing at the copy. The
// module cache and the user's go.mod are never edited.

// patchedModule is one module of the module cache with patched files.
type patchedModule struct {
	path, version string // module path and version (unescaped)
	// required is the version the build list selects when the main go.mod replaces it
	// with this one ("" when it is this one).
	required string
	dir      string // its directory in the module cache
	files    map[string][]byte
}

// splitModCache moves the patched files that live beneath GOMODCACHE out of files
// (keyed by absolute path) into one patchedModule per module.
func splitModCache(modcache string, files map[string][]byte) (map[string]*patchedModule, error) {
	mods := map[string]*patchedModule{}
	prefix := filepath.Clean(modcache) + string(filepath.Separator)
	for orig, content := range files {
		if !strings.HasPrefix(orig, prefix) {
			continue
		}
		rel := filepath.ToSlash(strings.TrimPrefix(orig, prefix))
		parts := strings.Split(rel, "/")
		at := -1
		for i, p := range parts {
			if strings.Contains(p, "@") {
				at = i
				break
			}
		}
		if at < 0 {
			return nil, fmt.Errorf("%s: not in a module directory of the module cache", orig)
		}
		name, version, _ := strings.Cut(parts[at], "@")
		escPath := strings.Join(append(append([]string(nil), parts[:at]...), name), "/")
		dir := filepath.Join(modcache, filepath.FromSlash(strings.Join(parts[:at+1], "/")))
		m := mods[dir]
		if m == nil {
			m = &patchedModule{path: unescapeModPath(escPath), version: unescapeModPath(version), dir: dir, files: map[string][]byte{}}
			mods[dir] = m
		}
		m.files[strings.Join(parts[at+1:], "/")] = content
		delete(files, orig)
	}
	return mods, nil
}

// unescapeModPath undoes the module cache's case encoding ("!x" is "X").
func unescapeModPath(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '!' && i+1 < len(s) {
			i++
			b.WriteRune(unicode.ToUpper(rune(s[i])))
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// The go command records the directory of every replace directive in the binary's build
// information (runtime.modinfo, which runtime/debug.ReadBuildInfo reads), and the
// guest's memory layout follows that string's length: the Go runtime's heap goal counts
// the globals, so the collector, and with it the guest's clock reads and every virtual
// time after them, move with it. A copy named by its place under the user's cache
// directory made a run depend on how long that directory's path is: etcd v3.5.5's seeds
// 3 and 5 failed with the cache at /root/.cache/seedfall and passed with it at /tmp/x.
// So the build names each copy through a root of recordedRootLen bytes whatever the
// cache's path (recordedRoot): the cache itself when its path has that length, else a
// symbolic link to it of that length. recordedRootLen is the length of
// /root/.cache/seedfall, where the results this repository quotes were recorded, so that
// those runs keep their layout. (The go command must find the copy at the path it
// records: the assembler and vet run in the package's directory, so a path that only a
// build overlay holds does not do.)
const recordedRootLen = len("/root/.cache/seedfall")

// recordedRoot returns a path of recordedRootLen bytes that leads to the cache
// directory: the cache's own path, or a symbolic link to it under the cache (a shorter
// path) or under /tmp/sf-<uid> (a longer one), named by the hash of the cache's path so
// that two caches do not share one. It returns the cache's own path where no such link
// can be made (Windows, no /tmp, a /tmp/sf-<uid> that is not this user's directory): the
// build then still works, and only its layout depends on the cache's path.
func recordedRoot() string {
	cache, err := filepath.Abs(CacheDir())
	if err != nil {
		return CacheDir()
	}
	if len(cache) == recordedRootLen || runtime.GOOS == "windows" {
		return cache
	}
	base := cache
	if len(cache)+5 > recordedRootLen {
		base = fmt.Sprintf("/tmp/sf-%d", os.Getuid())
		if err := os.Mkdir(base, 0o700); err != nil && !os.IsExist(err) {
			return cache
		}
		if fi, err := os.Lstat(base); err != nil || !fi.IsDir() || !ownedByMe(fi) {
			return cache
		}
	}
	n := recordedRootLen - len(base) - 1
	if n < 4 {
		return cache
	}
	link := base + "/" + shortHash(cache)[:n]
	if target, err := os.Readlink(link); err == nil && target == cache {
		return link
	}
	// Made afresh (a link of the same name to another cache is replaced: a hash
	// collision, or a cache that moved), atomically.
	tmp := fmt.Sprintf("%s.%d", link, os.Getpid())
	os.Remove(tmp)
	if err := os.Symlink(cache, tmp); err != nil {
		return cache
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return cache
	}
	if base != cache {
		removeDanglingLinks(base)
	}
	return link
}

// removeDanglingLinks removes the links in dir (this user's /tmp/sf-<uid>) whose cache
// no longer exists: each cache that was ever used leaves one (a test's temporary cache,
// a CI job's), made when its first build ran.
func removeDanglingLinks(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			os.Remove(p)
		}
	}
}

// recordedModuleDir is the path the build records for the copy of a module at dst, a
// directory under the cache: absolute, as a replace directive's directory must be.
func recordedModuleDir(dst string) string {
	cache, err1 := filepath.Abs(CacheDir())
	abs, err2 := filepath.Abs(dst)
	if err1 != nil || err2 != nil {
		return dst
	}
	rel, err := filepath.Rel(cache, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return abs
	}
	return filepath.Join(recordedRoot(), rel)
}

// writePatchedModules copies each module to dir (named by the hash of its patched
// contents, so concurrent builds of the same patch share one finished copy), applies
// the patched files, and writes a go.mod for -modfile that replaces each module with its
// copy, by the path the build records for it (recordedModuleDir). It returns the
// -modfile path.
func writePatchedModules(n Spec, dir string, mods map[string]*patchedModule) (string, error) {
	gomod, err := goEnv(n.Dir, "GOMOD")
	if err != nil {
		return "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("patches need a go.mod: %s is not in a module", n.Dir)
	}
	orig, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	keys := make([]string, 0, len(mods))
	for k := range mods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var replaces strings.Builder
	for _, k := range keys {
		m := mods[k]
		h := sha256.New()
		// A copy whose //line directives name a link (recordedRoot) is not one that names
		// the cache: the link is part of its name. Where the root is the cache itself, the
		// copy is named as before links existed, so that its path and contents, and the
		// binaries built from it (go1.27's layout follows the copy's name too), stay
		// those the quoted results were recorded with.
		if root, cache := recordedRoot(), CacheDir(); root != cache {
			fmt.Fprintf(h, "recorded through %s\n", root)
		}
		fmt.Fprintf(h, "%s@%s\n", m.path, m.version)
		names := make([]string, 0, len(m.files))
		for n := range m.files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(h, "%s %d\n", n, len(m.files[n]))
			h.Write(m.files[n])
		}
		sum := hex.EncodeToString(h.Sum(nil)[:8])
		dst := filepath.Join(dir, "modules", filepath.Base(m.dir)+"-"+sum)
		rec := recordedModuleDir(dst)
		if _, err := os.Stat(dst); err != nil {
			tmp, err := os.MkdirTemp(filepath.Join(dir), "module-*")
			if err != nil {
				return "", err
			}
			if err := copyTree(m.dir, tmp); err != nil {
				os.RemoveAll(tmp)
				return "", fmt.Errorf("copy %s: %w", m.dir, err)
			}
			for _, n := range names {
				p := filepath.Join(tmp, filepath.FromSlash(n))
				if platform.IsRemoved(m.files[n]) {
					if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
						os.RemoveAll(tmp)
						return "", err
					}
					continue
				}
				// A file the Linux personality renamed names its original in a //line
				// directive; in the copy, the original is the copy's, by the path the
				// build records.
				content := m.files[n]
				if rest, ok := bytes.CutPrefix(content, []byte("//line "+m.dir+string(filepath.Separator))); ok {
					content = append([]byte("//line "+rec+string(filepath.Separator)), rest...)
				}
				if err := os.WriteFile(p, content, 0o644); err != nil {
					os.RemoveAll(tmp)
					return "", err
				}
			}
			if _, err := os.Stat(filepath.Join(tmp, "go.mod")); err != nil {
				os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module "+m.path+"\n"), 0o644)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return "", err
			}
			if err := os.Rename(tmp, dst); err != nil {
				os.RemoveAll(tmp) // another build finished the same copy first
				if _, serr := os.Stat(dst); serr != nil {
					return "", err
				}
			}
		}
		v := m.version
		if m.required != "" {
			v = m.required
		}
		fmt.Fprintf(&replaces, "replace %s %s => %s\n", m.path, v, rec)
	}
	content := append(append([]byte(nil), orig...), []byte("\n// added by seedfall for patches\n"+replaces.String())...)
	modfile := filepath.Join(dir, "patched.mod")
	if err := os.WriteFile(modfile, content, 0o644); err != nil {
		return "", err
	}
	sumData, err := os.ReadFile(strings.TrimSuffix(gomod, ".mod") + ".sum")
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "patched.sum"), sumData, 0o644); err != nil {
		return "", err
	}
	return modfile, nil
}

// copyTree copies a directory tree of regular files, writable.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		t := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(t, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(t, data, 0o644)
	})
}
