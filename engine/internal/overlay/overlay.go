package overlay

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

//go:embed files/*.go.txt
var files embed.FS

// GoVersion is the Go release series the replacement files were written
// against. They are copies of that release's package net files with
// seedfall changes; another series may not compile or may behave
// differently.
const GoVersion = "go1.26"

// Replaced lists the files of $GOROOT/src/net that the overlay replaces.
// Each must exist in the given GOROOT, which also guards against the
// silent-ignore trap (a key that matches no GOROOT file would add a file
// instead of replacing one).
var Replaced = []string{
	"fd_fake.go",
	"interface_stub.go",
	"lookup_unix.go",
	"net_fake.go",
	"sockopt_fake.go",
	"tcpsockopt_stub.go",
}

// Added lists the files the overlay adds to $GOROOT/src/net; none may
// exist there already.
var Added = []string{
	"seedfall_wasip1.go",
}

// overlayFile is the format read by go build -overlay.
type overlayFile struct {
	Replace map[string]string
}

// Write writes the replacement files for package net into dir and an
// overlay description next to them, and returns the path of that
// overlay JSON file, for `go build -overlay <path>` with GOOS=wasip1.
// goroot must be the toolchain's `go env GOROOT`: the overlay's keys are
// <goroot>/src/net/<file>, and the go command silently ignores keys that
// do not name its GOROOT files. Check each build with VerifyImports.
func Write(dir, goroot string) (overlayJSON string, err error) {
	if goroot == "" {
		return "", errors.New("overlay: empty GOROOT")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	if goroot, err = filepath.Abs(goroot); err != nil {
		return "", err
	}
	netDir := filepath.Join(goroot, "src", "net")
	if err := checkVersion(goroot); err != nil {
		return "", err
	}
	for _, name := range Replaced {
		if st, err := os.Stat(filepath.Join(netDir, name)); err != nil || !st.Mode().IsRegular() {
			return "", fmt.Errorf("overlay: %s is not a GOROOT (no regular file src/net/%s); pass `go env GOROOT`", goroot, name)
		}
	}
	for _, name := range Added {
		if _, err := os.Stat(filepath.Join(netDir, name)); err == nil {
			return "", fmt.Errorf("overlay: %s already exists in GOROOT; it would be replaced, not added", filepath.Join(netDir, name))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ov := overlayFile{Replace: map[string]string{}}
	for _, name := range append(append([]string(nil), Replaced...), Added...) {
		src, err := files.ReadFile("files/" + name + ".txt")
		if err != nil {
			return "", fmt.Errorf("overlay: embedded %s: %w", name, err)
		}
		dst := filepath.Join(dir, name)
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			return "", err
		}
		ov.Replace[filepath.Join(netDir, name)] = dst
	}
	js, err := json.MarshalIndent(ov, "", "\t")
	if err != nil {
		return "", err
	}
	overlayJSON = filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayJSON, append(js, '\n'), 0o644); err != nil {
		return "", err
	}
	return overlayJSON, nil
}

// checkVersion rejects a GOROOT of another release series. A GOROOT
// without a readable VERSION file (a development toolchain) is accepted.
func checkVersion(goroot string) error {
	b, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return nil
	}
	v, _, _ := strings.Cut(string(b), "\n")
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "go1.") {
		return nil
	}
	if v != GoVersion && !strings.HasPrefix(v, GoVersion+".") && !strings.HasPrefix(v, GoVersion+"rc") {
		return fmt.Errorf("overlay: the net overlay is written for %s, but GOROOT %s is %s", GoVersion, goroot, v)
	}
	return nil
}

// Fingerprint identifies the overlay's content: a hash of the embedded replacement
// files, so that a build cache keyed on it rebuilds when seedfall's net package changes.
func Fingerprint() string {
	h := sha256.New()
	for _, name := range append(append([]string(nil), Replaced...), Added...) {
		src, _ := files.ReadFile("files/" + name + ".txt")
		fmt.Fprintf(h, "%s %d\n", name, len(src))
		h.Write(src)
	}
	return hex.EncodeToString(h.Sum(nil))
}
