package build

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBuildDoesNotDependOnCacheDir: a node whose patched dependency lives in the module
// cache builds to a binary of the same length, its build information the same but for
// the recorded root, whatever seedfall's cache directory is: shorter than
// recordedRootLen, longer, or of that length. Before the copies were recorded through a
// root of fixed length (recordedRoot), the build information held the cache's own path,
// and a cache under a longer path gave a longer binary whose runs differed
// (examples/etcd-server's seeds 3 and 5 failed under /root/.cache/seedfall and passed
// under /tmp/x).
func TestBuildDoesNotDependOnCacheDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a guest for wasip1 twice")
	}
	modcache := t.TempDir()
	t.Setenv("GOMODCACHE", modcache)
	t.Setenv("GOFLAGS", "-mod=mod")
	dir := t.TempDir()
	write := func(p, text string) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	depDir := filepath.Join(modcache, "example.com", "dep@v1.0.0")
	write(filepath.Join(depDir, "go.mod"), "module example.com/dep\n\ngo 1.26\n")
	write(filepath.Join(depDir, "dep.go"), "package dep\n\nconst A = 1\n")
	write(filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.26\n\nrequire example.com/dep v1.0.0\n\nreplace example.com/dep => "+depDir+"\n")
	write(filepath.Join(dir, "main.go"), "package main\n\nimport (\n\t\"fmt\"\n\t\"runtime/debug\"\n\n\t\"example.com/dep\"\n)\n\nfunc main() {\n\tbi, _ := debug.ReadBuildInfo()\n\tfmt.Println(dep.A, len(bi.String()))\n}\n")
	write(filepath.Join(dir, "a.patch"), "--- a/example.com/dep/dep.go\n+++ b/example.com/dep/dep.go\n@@ -1,3 +1,3 @@\n package dep\n \n-const A = 1\n+const A = 10\n")
	spec := Spec{Dir: dir, ConfigPath: filepath.Join(dir, "seedfall.json"), Name: "server", Pkg: ".", Patches: []string{"a.patch"}}

	short, err := os.MkdirTemp("/tmp", "c")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	exact := short + "/" + strings.Repeat("e", recordedRootLen-len(short)-1)
	caches := []string{short, exact, filepath.Join(t.TempDir(), "a", "much", "longer", "cache", "directory")}
	var built [][]byte
	for _, cache := range caches {
		t.Setenv("SEEDFALL_CACHE", cache)
		p, err := Node(context.Background(), spec)
		if err != nil {
			t.Fatalf("cache %s: %v", cache, err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		root := recordedRoot()
		if fi, err := os.Lstat(root); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			t.Cleanup(func() { os.Remove(root) })
		}
		if len(root) != recordedRootLen {
			t.Errorf("cache %s: recorded root %s is %d bytes, want %d", cache, root, len(root), recordedRootLen)
		}
		if !bytes.Contains(data, []byte(root+"/overlay/server-")) {
			t.Errorf("the build under %s does not record the patched copy through %s", cache, root)
		}
		// The root's bytes and the copy's content hash (which names the root when it is a
		// link) may differ from cache to cache; their lengths, and everything else, may not.
		data = bytes.ReplaceAll(data, []byte(root), []byte(strings.Repeat("R", len(root))))
		data = copySum.ReplaceAll(data, []byte("dep@v1.0.0-SSSSSSSSSSSSSSSS"))
		built = append(built, maskBuildID(data))
	}
	for i := range built[1:] {
		if !bytes.Equal(built[0], built[i+1]) {
			t.Errorf("caches %s and %s: builds of %d and %d bytes, or differing beyond the recorded root", caches[0], caches[i+1], len(built[0]), len(built[i+1]))
		}
	}
}

// copySum is the patched copy's directory name in the build information.
var copySum = regexp.MustCompile(`dep@v1\.0\.0-[0-9a-f]{16}`)

// maskBuildID blanks the go command's build ID, a custom section outside the guest's
// memory whose action IDs hash the packages' directories.
func maskBuildID(data []byte) []byte {
	const marker = "Go build ID: \""
	i := bytes.Index(data, []byte(marker))
	if i < 0 {
		return data
	}
	start := i + len(marker)
	end := bytes.IndexByte(data[start:], '"')
	if end < 0 {
		return data
	}
	copy(data[start:start+end], bytes.Repeat([]byte("B"), end))
	return data
}

// TestRecordedRootRemovesDanglingLinks: the links under /tmp/sf-<uid> whose cache is gone
// (a test's temporary cache, a finished CI job's) are removed when a link is made; a
// link whose cache exists stays.
func TestRecordedRootRemovesDanglingLinks(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone", "a", "much", "longer", "cache", "directory")
	kept := filepath.Join(t.TempDir(), "kept", "a", "much", "longer", "cache", "directory")
	os.MkdirAll(gone, 0o755)
	os.MkdirAll(kept, 0o755)
	var links []string
	for _, cache := range []string{gone, kept} {
		t.Setenv("SEEDFALL_CACHE", cache)
		root := recordedRoot()
		if fi, err := os.Lstat(root); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Skipf("no link made for %s (%v): this platform records the cache's own path", cache, err)
		}
		t.Cleanup(func() { os.Remove(root) })
		links = append(links, root)
	}
	os.RemoveAll(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(gone))))))
	other := filepath.Join(t.TempDir(), "other", "a", "much", "longer", "cache", "directory")
	os.MkdirAll(other, 0o755)
	t.Setenv("SEEDFALL_CACHE", other)
	made := recordedRoot()
	t.Cleanup(func() { os.Remove(made) })
	if _, err := os.Lstat(links[0]); !os.IsNotExist(err) {
		t.Errorf("the link %s to a removed cache is still there (%v)", links[0], err)
	}
	if _, err := os.Stat(links[1]); err != nil {
		t.Errorf("the link %s to a cache that exists was removed: %v", links[1], err)
	}
}
