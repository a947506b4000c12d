package engineapi_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// commandsUse matches a use of engine.Commands (engine's typed methods for seedfall's
// own commands) from another package.
var commandsUse = regexp.MustCompile(`\bengine\.Commands\b`)

// usesCommands returns the files under root, outside engine/ and internal/engineapi/,
// whose Go source names engine.Commands.
func usesCommands(t *testing.T, root string) []string {
	t.Helper()
	var bad []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "engine" || rel == "internal/engineapi" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if commandsUse.Match(src) {
			bad = append(bad, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// TestCommandsOnlyFromEngineapi: engine.Commands is public only because Go has no
// other typed way for engine's unexported functions to reach seedfall's commands;
// everything outside engine goes through this package, so that its documentation is the
// one place that says what each is for.
func TestCommandsOnlyFromEngineapi(t *testing.T) {
	if bad := usesCommands(t, filepath.Join("..", "..")); len(bad) > 0 {
		t.Errorf("these files use engine.Commands; call internal/engineapi instead: %v", bad)
	}
	// Negative control: a file that calls it directly is found.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cmd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cmd", "x.go"), []byte("package x\nvar _ = engine.Commands.WasmPaths\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if bad := usesCommands(t, dir); len(bad) != 1 || bad[0] != "cmd/x.go" {
		t.Errorf("negative control: found %v, want [cmd/x.go]", bad)
	}
}
