package overlay

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
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

// shared holds the overlay written once for all build tests.
var shared struct {
	once    sync.Once
	dir     string
	overlay string
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
		shared.overlay, shared.err = Write(filepath.Join(shared.dir, "overlay"), goEnv(t, "GOROOT"))
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
	cmd := exec.Command(goTool(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
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
	fake := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fake, "src", "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range Replaced {
		if err := os.WriteFile(filepath.Join(fake, "src", "net", name), []byte("package net\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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

func TestWriteOverlayJSON(t *testing.T) {
	goroot := t.TempDir()
	netDir := filepath.Join(goroot, "src", "net")
	if err := os.MkdirAll(netDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range Replaced {
		if err := os.WriteFile(filepath.Join(netDir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
	}

	// Not a GOROOT: refused at once.
	if _, err := Write(t.TempDir(), t.TempDir()); err == nil {
		t.Error("Write accepted a directory without src/net files as GOROOT")
	}
	// Another release series: refused.
	if err := os.WriteFile(filepath.Join(goroot, "VERSION"), []byte("go1.99.1\ntime x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(t.TempDir(), goroot); err == nil || !strings.Contains(err.Error(), "go1.99.1") {
		t.Errorf("Write with a go1.99.1 GOROOT: %v", err)
	}
	if err := os.WriteFile(filepath.Join(goroot, "VERSION"), []byte(GoVersion+".3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(t.TempDir(), goroot); err != nil {
		t.Errorf("Write with a %s.3 GOROOT: %v", GoVersion, err)
	}
	// A file we would add already exists: refused.
	if err := os.WriteFile(filepath.Join(netDir, Added[0]), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(t.TempDir(), goroot); err == nil {
		t.Error("Write accepted a GOROOT that already has " + Added[0])
	}
}
