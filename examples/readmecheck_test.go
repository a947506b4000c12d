package examples_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Each finding's replay line (docs/findings.md) runs in the package of its example under
// modules/ (exampletest.FindingReplays), so that the replays' builds spread over the
// packages go test runs side by side; the README commands run with
// SEEDFALL_READMECHECK=1 (exampletest.ReadmeCommands).

// TestFindingReplaysRun checks that every example a finding's replay line names has a
// package under modules/ that runs the replays.
func TestFindingReplaysRun(t *testing.T) {
	cmds := exampletest.ParseFindingReplays(t, filepath.Join("..", "docs", "findings.md"))
	if len(cmds) < 20 {
		t.Fatalf("found %d replay lines in docs/findings.md: the parser lost them", len(cmds))
	}
	runners, err := filepath.Glob("modules/*/*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string][]string{}
	for _, r := range runners {
		data, err := os.ReadFile(r)
		if err != nil {
			t.Fatal(err)
		}
		rest := string(data)
		for {
			_, after, ok := strings.Cut(rest, `exampletest.FindingReplays(t, "`)
			if !ok {
				break
			}
			name, tail, _ := strings.Cut(after, `"`)
			runs[name] = append(runs[name], filepath.Dir(r))
			rest = tail
		}
	}
	need := map[string]int{}
	for _, c := range cmds {
		need[c.Example] = c.Line
	}
	var names []string
	for name := range need {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch pkgs := runs[name]; len(pkgs) {
		case 0:
			t.Errorf("docs/findings.md:%d replays in examples/%s and no package runs it: add exampletest.FindingReplays(t, %q) to modules/%s", need[name], name, name, name)
		case 1:
		default:
			t.Errorf("the replays of examples/%s run in %d packages (%s): keep one", name, len(pkgs), strings.Join(pkgs, ", "))
		}
	}
	for name, pkgs := range runs {
		if need[name] == 0 {
			t.Errorf("%s runs the replays of examples/%s, which docs/findings.md has none of", strings.Join(pkgs, ", "), name)
		}
	}
}

// TestReadmeCommands runs every `$ seedfall …` command the examples' READMEs quote.
func TestReadmeCommands(t *testing.T) {
	if os.Getenv("SEEDFALL_READMECHECK") != "1" {
		t.Skip("SEEDFALL_READMECHECK=1 re-runs every command the examples' READMEs quote (hours of sweeps)")
	}
	readmes, err := filepath.Glob("*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, readme := range readmes {
		t.Run(filepath.Dir(readme), func(t *testing.T) { exampletest.ReadmeCommands(t, readme) })
	}
	// The repository's README and docs quote commands run from the root
	// (TestReadmeCommands/root-README.md, TestReadmeCommands/docs-crashes.md).
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{filepath.Join("..", "README.md")}, docs...) {
		name := "root-" + filepath.Base(f)
		if filepath.Base(filepath.Dir(f)) == "docs" {
			name = "docs-" + filepath.Base(f)
		}
		t.Run(name, func(t *testing.T) { exampletest.ReadmeCommandsIn(t, f, "..") })
	}
}

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }
