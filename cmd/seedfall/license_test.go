package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLicense: the repository carries the Apache-2.0 license the product page promises.
func TestLicense(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Apache License", "Version 2.0, January 2004", "END OF TERMS AND CONDITIONS", "Copyright 2026 The seedfall Authors"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("LICENSE lacks %q", want)
		}
	}
}

// TestNotice: NOTICE lists every module compiled into the seedfall binary, at the version
// the build uses, with a license.
func TestNotice(t *testing.T) {
	notice, err := os.ReadFile(filepath.Join("..", "..", "NOTICE"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // module -> "version | license"
	for _, line := range strings.Split(string(notice), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) == 3 && strings.Contains(cells[0], ".") {
			rows[cells[0]] = cells[1] + " | " + cells[2]
		}
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}} {{.Module.Version}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, version, _ := strings.Cut(line, " ")
		if path == "github.com/seedfall/seedfall" || seen[path] {
			continue
		}
		seen[path] = true
		row, ok := rows[path]
		if !ok {
			t.Errorf("NOTICE does not list %s %s, which the binary compiles in", path, version)
			continue
		}
		if v, license, _ := strings.Cut(row, " | "); v != version || license == "" {
			t.Errorf("NOTICE lists %s as %q, the build uses %s", path, row, version)
		}
	}
	if len(seen) < 5 {
		t.Fatalf("go list found only %d modules: %s", len(seen), out)
	}
}
