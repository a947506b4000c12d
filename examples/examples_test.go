// Package examples_test checks that every example module's tests run from the root's
// `go test ./...`: each real third-party system is its own module, which the root does not
// reach, so examples/modules/<name> runs it (one test binary, and one timeout, each).
package examples_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryModuleRuns(t *testing.T) {
	mods, err := filepath.Glob("*/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) == 0 {
		t.Fatal("no example modules found")
	}
	for _, m := range mods {
		name := filepath.Dir(m)
		data, err := os.ReadFile(filepath.Join("modules", name, "module_test.go"))
		if err != nil || !strings.Contains(string(data), `exampletest.RunModule(t, "../../`+name+`")`) {
			t.Errorf("example module %s has no runner: add modules/%s/module_test.go calling exampletest.RunModule(t, \"../../%s\")", name, name, name)
		}
	}
}
