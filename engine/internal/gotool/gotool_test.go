package gotool

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

func TestResolve(t *testing.T) {
	cache := t.TempDir()
	// A toolchain installed outside the module cache is used as it is.
	tc, err := Resolve("/usr/local/go", "/root/go/pkg/mod", cache)
	if err != nil || tc.Go != "go" || tc.GOROOT != "/usr/local/go" || tc.Env != nil {
		t.Fatalf("Resolve of an installed toolchain = %+v, %v", tc, err)
	}
	// One that GOTOOLCHAIN fetched into the module cache is run through a link.
	modcache := t.TempDir()
	root := filepath.Join(modcache, "golang.org", "toolchain@v0.0.1-go1.27.3.linux-amd64")
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second time finds the link made by the first
		tc, err = Resolve(root, modcache, cache)
		if err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(cache, "goroot", filepath.Base(root))
		if tc.GOROOT != link || tc.Go != filepath.Join(link, "bin", "go") ||
			!slices.Equal(tc.Env, []string{"GOROOT=" + link, "GOTOOLCHAIN=local"}) {
			t.Fatalf("Resolve of a fetched toolchain = %+v", tc)
		}
		if got, err := os.Readlink(link); err != nil || got != root {
			t.Fatalf("link %s -> %q, %v; want %s", link, got, err, root)
		}
	}
	// A stale link (the module cache moved) is replaced.
	moved := filepath.Join(t.TempDir(), filepath.Base(root))
	if _, err := Resolve(moved, filepath.Dir(filepath.Dir(moved)), cache); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(filepath.Join(cache, "goroot", filepath.Base(root))); got != moved {
		t.Fatalf("stale link not replaced: -> %s", got)
	}
	if _, err := Resolve("", modcache, cache); err == nil {
		t.Fatal("Resolve accepted an empty GOROOT")
	}
}

// TestResolveConcurrent: node builds of one process resolve the same fetched toolchain
// at once; every one gets the link, none an error, and no temporary name is left.
func TestResolveConcurrent(t *testing.T) {
	cache, modcache := t.TempDir(), t.TempDir()
	root := filepath.Join(modcache, "golang.org", "toolchain@v0.0.1-go1.27.3.linux-amd64")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := Resolve(root, modcache, cache); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ents, _ := os.ReadDir(filepath.Join(cache, "goroot"))
	if len(ents) != 1 || ents[0].Name() != filepath.Base(root) {
		t.Errorf("goroot holds %v, want only the link", ents)
	}
}
