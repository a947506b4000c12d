package overlay

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/seedfall/seedfall/engine/internal/gotool"
	"github.com/seedfall/seedfall/engine/internal/srcedit"
)

// goEnv returns `go env key`.
func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command(goTool(), "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

func goTool() string {
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}

// shared holds the overlay written once for all build tests, and the toolchain that
// builds with it: one that GOTOOLCHAIN fetched lives in the module cache, whose files
// go build may not overlay, and is run through a link (internal/gotool), as seedfall's
// builds run it.
var shared struct {
	once    sync.Once
	dir     string
	overlay string
	tc      gotool.Toolchain
	err     error
}

func sharedOverlay(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds wasip1 programs; skipped with -short")
	}
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "seedfall-overlay-test-")
		if shared.err != nil {
			return
		}
		shared.tc, shared.err = gotool.Resolve(goEnv(t, "GOROOT"), goEnv(t, "GOMODCACHE"), shared.dir)
		if shared.err != nil {
			return
		}
		shared.overlay, shared.err = Write(filepath.Join(shared.dir, "overlay"), shared.tc.GOROOT)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.overlay
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// buildWasip1 builds a one-file main package for wasip1 with the given
// overlay (none if "") and returns the module bytes.
func buildWasip1(t *testing.T, src, overlay string) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module prog\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "prog.wasm")
	args := []string{"build", "-trimpath", "-buildvcs=false", "-o", out}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	args = append(args, ".")
	goBin, env := goTool(), []string(nil)
	if overlay != "" {
		sharedOverlay(t)
		goBin, env = shared.tc.Go, shared.tc.Env
	}
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return os.ReadFile(out)
}

const listenGetSrc = `package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
)

func main() {
	ln, err := net.Listen("tcp", ":8080")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	resp, err := http.Get("http://server:8080/")
	if err != nil {
		panic(err)
	}
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(ln.Addr(), string(b))
}
`

const httpServerClientSrc = `package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("/ping", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "pong from %s to %s", os.Getenv("SEEDFALL_NODE"), r.RemoteAddr)
	})
	srv := &http.Server{Addr: ":7000", Handler: mux, ReadHeaderTimeout: time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	client := &http.Client{Timeout: 5 * time.Second}
	for i := 0; i < 3; i++ {
		resp, err := client.Get("http://server:7000/ping")
		if err != nil {
			fmt.Println("get:", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(string(b))
	}
	c, err := net.DialTimeout("tcp", "server:7000", time.Second)
	if err == nil {
		c.SetDeadline(time.Now().Add(time.Second))
		fmt.Println(c.LocalAddr(), c.RemoteAddr())
		c.Close()
		_, err = c.Read(make([]byte, 1))
		fmt.Println(errors.Is(err, net.ErrClosed))
	}
	srv.Shutdown(context.Background())
}
`

func TestListenAndGetWithOverlay(t *testing.T) {
	ov := sharedOverlay(t)
	wasm, err := buildWasip1(t, listenGetSrc, ov)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyImports(wasm); err != nil {
		t.Fatalf("with overlay: %v", err)
	}
	imps, err := Imports(wasm)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, im := range imps {
		if im.Module == HostModule {
			got[im.Name] = true
			if im.Kind != KindFunc {
				t.Errorf("%s: kind %d, want func", im, im.Kind)
			}
		}
	}
	for _, name := range []string{"sock_listen", "sock_dial", "sock_status", "sock_addr"} {
		if !got[name] {
			t.Errorf("module does not import %s.%s (imports %v)", HostModule, name, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("seedfall imports = %v, want exactly the four socket calls", got)
	}

	plain, err := buildWasip1(t, listenGetSrc, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyImports(plain); err == nil {
		t.Fatal("VerifyImports passed on a build without the overlay")
	}
}

func TestHTTPServerClientWithOverlay(t *testing.T) {
	ov := sharedOverlay(t)
	wasm, err := buildWasip1(t, httpServerClientSrc, ov)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyImports(wasm); err != nil {
		t.Fatal(err)
	}
}

// TestWrongGOROOT: an overlay whose keys name another GOROOT is ignored
// by go build without a word; VerifyImports must notice.
func TestWrongGOROOT(t *testing.T) {
	ov := sharedOverlay(t)
	_ = ov
	fake := fakeGOROOT(t, "")
	wrong, err := Write(filepath.Join(t.TempDir(), "ov"), fake)
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := buildWasip1(t, listenGetSrc, wrong)
	if err != nil {
		t.Fatal(err)
	}
	err = VerifyImports(wasm)
	if err == nil {
		t.Fatal("VerifyImports passed on a build whose overlay named another GOROOT")
	}
	if !strings.Contains(err.Error(), "GOROOT") {
		t.Errorf("error does not point at GOROOT: %v", err)
	}
}

// fakeGOROOT is a directory holding copies of the building toolchain's src/net files
// that the overlay edits, and a VERSION file saying version (none if "").
func fakeGOROOT(t *testing.T, version string) string {
	t.Helper()
	real := goEnv(t, "GOROOT")
	fake := t.TempDir()
	netDir := filepath.Join(fake, "src", "net")
	if err := os.MkdirAll(netDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range Replaced {
		b, err := os.ReadFile(filepath.Join(real, "src", "net", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(netDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if version != "" {
		if err := os.WriteFile(filepath.Join(fake, "VERSION"), []byte(version+"\ntime 2026-11-01T00:00:00Z\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fake
}

func TestWriteOverlayJSON(t *testing.T) {
	goroot := fakeGOROOT(t, "")
	netDir := filepath.Join(goroot, "src", "net")
	dir := filepath.Join(t.TempDir(), "out")
	path, err := Write(dir, goroot)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "overlay.json") {
		t.Errorf("path = %s", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ov struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &ov); err != nil {
		t.Fatal(err)
	}
	want := append(append([]string(nil), Replaced...), Added...)
	if len(ov.Replace) != len(want) {
		t.Errorf("overlay has %d entries, want %d: %v", len(ov.Replace), len(want), ov.Replace)
	}
	for _, name := range want {
		dst, ok := ov.Replace[filepath.Join(netDir, name)]
		if !ok {
			t.Errorf("no key for %s", name)
			continue
		}
		if dst != filepath.Join(dir, name) {
			t.Errorf("%s -> %s", name, dst)
		}
		src, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(src, []byte("package net")) {
			t.Errorf("%s is not a package net file", dst)
		}
		if !bytes.Contains(src, []byte("seedfall")) {
			t.Errorf("%s has no seedfall change", dst)
		}
	}

	// Not a GOROOT: refused at once.
	if _, err := Write(t.TempDir(), t.TempDir()); err == nil {
		t.Error("Write accepted a directory without src/net files as GOROOT")
	}
	// A file we would add already exists: refused.
	if err := os.WriteFile(filepath.Join(netDir, Added[0]), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(t.TempDir(), goroot); err == nil {
		t.Error("Write accepted a GOROOT that already has " + Added[0])
	}
}

// TestReleases: the edits are made for every release whose files they fit, a release
// older than the oldest supported one is refused, and so is a release whose file lacks
// an anchor: the error names the file, the edit and the Go version, and nothing is
// written.
func TestReleases(t *testing.T) {
	for _, v := range []string{"go1.26.8", "go1.27.3", "go1.27rc2", "go1.31.0"} {
		if _, err := Write(filepath.Join(t.TempDir(), "ov"), fakeGOROOT(t, v)); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	if _, err := Write(filepath.Join(t.TempDir(), "ov"), fakeGOROOT(t, "go1.25.4")); err == nil ||
		!strings.Contains(err.Error(), "go1.25.4") || !strings.Contains(err.Error(), "go1.26 or later") {
		t.Errorf("go1.25.4: %v", err)
	}

	goroot := fakeGOROOT(t, "go1.28.1")
	lookup := filepath.Join(goroot, "src", "net", "lookup_unix.go")
	b, err := os.ReadFile(lookup)
	if err != nil {
		t.Fatal(err)
	}
	// As if go1.28 had renamed lookupMX's parameter.
	old := "func (r *Resolver) lookupMX(ctx context.Context, name string) ([]*MX, error) {"
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q", lookup, old)
	}
	b = bytes.Replace(b, []byte(old), []byte("func (r *Resolver) lookupMX(ctx context.Context, domain string) ([]*MX, error) {"), 1)
	if err := os.WriteFile(lookup, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ov")
	_, err = Write(out, goroot)
	var se *srcedit.Error
	if !errors.As(err, &se) {
		t.Fatalf("Write = %v, want a *srcedit.Error", err)
	}
	for _, want := range []string{"net overlay", "src/net/lookup_unix.go", "lookupMX: no DNS", "go1.28.1", "occurs 0 times"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q: %v", want, err)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("Write left %s behind after refusing: %v", out, err)
	}
}
