package overlay

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/seedfall/seedfall/engine/internal/srcedit"
)

//go:embed files/seedfall_wasip1.go.txt
var addedFile []byte

// Name is how the overlay names itself in errors.
const Name = "net overlay"

// Replaced lists the files of $GOROOT/src/net that the overlay replaces with edited
// copies of themselves (edits.go). Each must exist in the given GOROOT, which also
// guards against the silent-ignore trap (a key that matches no GOROOT file would add a
// file instead of replacing one).
var Replaced = func() []string {
	var names []string
	for _, f := range netFiles {
		names = append(names, path.Base(f.Path))
	}
	return names
}()

// Added lists the files the overlay adds to $GOROOT/src/net; none may
// exist there already. They are seedfall's own code, not copies of Go's.
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
		return "", errors.New("net overlay: empty GOROOT")
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	if goroot, err = filepath.Abs(goroot); err != nil {
		return "", err
	}
	netDir := filepath.Join(goroot, "src", "net")
	version, err := srcedit.CheckToolchain(Name, goroot)
	if err != nil {
		return "", err
	}
	for _, name := range Replaced {
		if st, err := os.Stat(filepath.Join(netDir, name)); err != nil || !st.Mode().IsRegular() {
			return "", fmt.Errorf("net overlay: %s is not a GOROOT (no regular file src/net/%s); pass `go env GOROOT`", goroot, name)
		}
	}
	for _, name := range Added {
		if _, err := os.Stat(filepath.Join(netDir, name)); err == nil {
			return "", fmt.Errorf("net overlay: %s already exists in GOROOT; it would be replaced, not added", filepath.Join(netDir, name))
		}
	}
	// Every file is edited before anything is written: a toolchain the edits do not fit
	// leaves no overlay behind.
	out := map[string][]byte{}
	for _, f := range netFiles {
		data, err := srcedit.ReadAndApply(Name, goroot, version, f)
		if err != nil {
			return "", err
		}
		out[path.Base(f.Path)] = data
	}
	out[Added[0]] = addedFile
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ov := overlayFile{Replace: map[string]string{}}
	for _, name := range append(append([]string(nil), Replaced...), Added...) {
		dst := filepath.Join(dir, name)
		if err := os.WriteFile(dst, out[name], 0o644); err != nil {
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

// Fingerprint identifies the overlay's content: its edits and added file, so that a
// build cache keyed on it rebuilds when seedfall's net package changes. (The
// toolchain's own files are covered by its version, which the cache key also holds.)
func Fingerprint() string {
	h := sha256.New()
	h.Write([]byte(srcedit.Fingerprint(netFiles)))
	fmt.Fprintf(h, "\n%s %d\n", Added[0], len(addedFile))
	h.Write(addedFile)
	return hex.EncodeToString(h.Sum(nil))
}
