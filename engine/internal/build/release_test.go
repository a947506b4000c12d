package build

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/internal/overlay"
)

// TestNetOverlayAnchorMissing: a toolchain whose package net lacks the code an edit of
// the net overlay changes (here lookup_unix.go's lookupMX, as if a release had renamed
// its parameter) fails the node's build before go build runs, with an error that names
// the node, the file, the edit and the Go version.
func TestNetOverlayAnchorMissing(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "VERSION"), []byte("go1.28.1\ntime x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	netDir := filepath.Join(root, "src", "net")
	if err := os.MkdirAll(netDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range overlay.Replaced {
		b, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "net", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "lookup_unix.go" {
			b = bytes.Replace(b, []byte("lookupMX(ctx context.Context, name string)"), []byte("lookupMX(ctx context.Context, domain string)"), 1)
		}
		if err := os.WriteFile(filepath.Join(netDir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := moduleOnToolchain(t, root)
	_, err := Node(context.Background(), Spec{Dir: dir, ConfigPath: filepath.Join(dir, "seedfall.json"), Name: "n1", Pkg: ".", NetOverlay: true})
	if err == nil {
		t.Fatal("built a node with net_overlay on a toolchain the edits do not fit")
	}
	t.Log(err)
	for _, w := range []string{`build node "n1": net overlay: the edit "lookupMX: no DNS" of src/net/lookup_unix.go does not apply to go1.28.1`, "occurs 0 times"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}
