package ci

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The Action's image carries the newest Go release. Nodes are built with the toolchain
// the go command picks in the config's module: a go.mod whose go line needs a newer
// release than the image's makes it fetch that release (GOTOOLCHAIN=auto, the default).
// A toolchain line is followed exactly, older than the image's Go too, as
// actions/setup-go's go-version-file follows it: the user's own tests and seedfall's
// nodes then run on one Go release, and a run is deterministic per toolchain. A
// GOTOOLCHAIN in the step's environment wins over both.

// toolchainLine is a go.mod toolchain directive naming a release.
var toolchainLine = regexp.MustCompile(`^toolchain\s+(go1\.[0-9]+(\.[0-9]+)?((rc|beta)[0-9]+)?)\s*(//.*)?$`)

// GoToolchain is the GOTOOLCHAIN that `seedfall ci` sets for the nodes of config ("" to
// leave the go command's choice), and a line that says which Go builds them and why.
func GoToolchain(config string, getenv func(string) string) (gotoolchain, why string, err error) {
	if v := getenv("GOTOOLCHAIN"); v != "" {
		return "", fmt.Sprintf("Go: GOTOOLCHAIN=%s from the environment", v), nil
	}
	dir, err := filepath.Abs(filepath.Dir(config))
	if err != nil {
		return "", "", err
	}
	for {
		gomod := filepath.Join(dir, "go.mod")
		f, err := os.Open(gomod)
		if err == nil {
			defer f.Close()
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if m := toolchainLine.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
					return m[1], fmt.Sprintf("Go: %s, from the toolchain line of %s", m[1], gomod), nil
				}
			}
			if err := sc.Err(); err != nil {
				return "", "", fmt.Errorf("read %s: %w", gomod, err)
			}
			return "", fmt.Sprintf("Go: the go command's choice for %s (no toolchain line)", gomod), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Sprintf("Go: the go command's choice (no go.mod above %s)", config), nil
		}
		dir = parent
	}
}
