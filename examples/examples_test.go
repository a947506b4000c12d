// Package examples_test checks that every example module's tests run from the root's
// `go test ./...`: each real third-party system is its own module, which the root does not
// reach, so examples/modules/<name> runs it (one test binary, and one timeout, each).
package examples_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	// A module whose suite is split runs part of it beside the rest: every test a runner
	// skips ("-skip", "^(TestA|TestB)") is run by another ("-run", "^(TestB|TestC)").
	runners, _ := filepath.Glob("modules/*/module_test.go")
	runs := map[string][]string{} // module -> the tests its runners run by name
	skips := map[string][]string{}
	for _, r := range runners {
		data, err := os.ReadFile(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, call := range regexp.MustCompile(`exampletest\.RunModule\(t, "\.\./\.\./([^"]+)"((?:, "[^"]*")*)\)`).FindAllStringSubmatch(string(data), -1) {
			flags := regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(call[2], -1)
			for i := 0; i+1 < len(flags); i++ {
				switch flags[i][1] {
				case "-run":
					runs[call[1]] = append(runs[call[1]], alternatives(flags[i+1][1])...)
				case "-skip":
					skips[call[1]] = append(skips[call[1]], alternatives(flags[i+1][1])...)
				}
			}
		}
	}
	for _, m := range mods {
		name := filepath.Dir(m)
		data, err := os.ReadFile(filepath.Join("modules", name, "module_test.go"))
		call := `exampletest.RunModule(t, "../../` + name + `"`
		if err != nil || !strings.Contains(string(data), call) {
			t.Errorf("example module %s has no runner: add modules/%s/module_test.go calling exampletest.RunModule(t, \"../../%s\")", name, name, name)
			continue
		}
		for _, skipped := range skips[name] {
			if !slices.Contains(runs[name], skipped) {
				t.Errorf("a runner of %s skips %s and no runner runs it: add one calling %s, \"-run\", \"^%s\")", name, skipped, call, skipped)
			}
		}
	}
}

// alternatives splits a test pattern of the runners, "^TestA" or "^(TestA|TestB)$", into
// its names.
func alternatives(pattern string) []string {
	p := strings.TrimSuffix(strings.TrimPrefix(pattern, "^"), "$")
	p = strings.TrimSuffix(strings.TrimPrefix(p, "("), ")")
	return strings.Split(p, "|")
}

// kept is one row of the template's table of kept names (examples/README.md).
type kept struct {
	main  string   // the main config, when it is not seedfall.json
	names []string // globs of other kept file names; a folder ends in "/"
}

// keptNames reads the "Kept names" table of the template.
func keptNames(t *testing.T, readme string) map[string]kept {
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "## Kept names")
	if !ok {
		t.Fatalf("%s: no \"## Kept names\" section", readme)
	}
	out := map[string]kept{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || strings.TrimSpace(cells[1]) == "example" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		k := kept{main: strings.Trim(strings.TrimSpace(cells[2]), "`")}
		for _, n := range strings.Split(cells[3], ",") {
			if n = strings.Trim(strings.TrimSpace(n), "`"); n != "" {
				k.names = append(k.names, n)
			}
		}
		out[strings.TrimSpace(cells[1])] = k
	}
	if len(out) == 0 {
		t.Fatalf("%s: the kept-names table has no rows", readme)
	}
	return out
}

// checkExample returns how the example in dir departs from the template.
func checkExample(dir string, k kept) []string {
	var problems []string
	has := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	keptName := func(name string) bool {
		for _, g := range k.names {
			if ok, _ := filepath.Match(g, name); ok {
				return true
			}
		}
		return false
	}
	main := "seedfall.json"
	if k.main != "" {
		main = k.main
	}
	// An example whose harness is a simulation test alone (simtest/, no config) has
	// no main config, client/ or server/: the test declares them.
	simOnly := has("simtest") && !has(main) && !has("client") && !has("server") && !has("node")
	if !has(main) && !simOnly {
		problems = append(problems, "no main config "+main)
	}
	if !has("seedfall_test.go") {
		problems = append(problems, "no seedfall_test.go")
	}
	if !simOnly && !has("client") && !sharedWorkload(filepath.Join(dir, main)) {
		problems = append(problems, "no client/ (the workload)")
	}
	if !simOnly && !has("server") && !has("node") && !keptName("v1/") {
		problems = append(problems, "no server/ or node/ (the system under test)")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return append(problems, err.Error())
	}
	for _, e := range entries {
		n := e.Name()
		switch {
		case e.IsDir(), strings.HasSuffix(n, ".faults.json"):
		case strings.HasSuffix(n, "_test.go"):
			if n != "seedfall_test.go" && n != "native_test.go" && n != "corruption_test.go" && !keptName(n) {
				problems = append(problems, n+": test files are seedfall_test.go, native_test.go and corruption_test.go")
			}
		case strings.HasSuffix(n, ".json"):
			if n != "seedfall.json" && !strings.HasPrefix(n, "seedfall.") && n != main && !keptName(n) {
				problems = append(problems, n+": configs are seedfall.json and seedfall.<variant>.json")
			}
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
		mod := string(data)
		for _, want := range []string{
			"module github.com/seedfall/seedfall/examples/" + filepath.Base(dir) + "\n",
			"github.com/seedfall/seedfall v0.0.0\n",
			"replace github.com/seedfall/seedfall => ../..\n",
		} {
			if !strings.Contains(mod, want) {
				problems = append(problems, "go.mod: no line "+strings.TrimSpace(want))
			}
		}
	}
	return problems
}

// sharedWorkload reports whether the config's workload is another example's client
// ("../raft/client"), which that example's module builds.
func sharedWorkload(config string) bool {
	data, err := os.ReadFile(config)
	if err != nil {
		return false
	}
	var c struct {
		Workload struct {
			Pkg string `json:"pkg"`
		} `json:"workload"`
	}
	if json.Unmarshal(data, &c) != nil || !strings.HasPrefix(c.Workload.Pkg, "../") || !strings.HasSuffix(c.Workload.Pkg, "/client") {
		return false
	}
	_, err = os.Stat(filepath.Join(filepath.Dir(config), c.Workload.Pkg))
	return err == nil
}

// TestExamplesFollowTemplate checks every example against the template in README.md.
func TestExamplesFollowTemplate(t *testing.T) {
	keep := keptNames(t, "README.md")
	readmes, err := filepath.Glob("*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(readmes) < 10 {
		t.Fatalf("found %d examples, want the dozen or so there are", len(readmes))
	}
	seen := map[string]bool{}
	for _, r := range readmes {
		dir := filepath.Dir(r)
		seen[dir] = true
		for _, p := range checkExample(dir, keep[dir]) {
			t.Errorf("examples/%s: %s (see examples/README.md)", dir, p)
		}
	}
	for name := range keep {
		if !seen[name] {
			t.Errorf("examples/README.md keeps names for %s, which is not an example", name)
		}
	}
}

// TestTemplateCheckCatchesDepartures is the negative control: an example named the old
// way must be reported.
func TestTemplateCheckCatchesDepartures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "leveldb")
	for _, f := range []string{"leveldb.json", "leveldb.nosync.json", "leveldb_test.go", "seed-1.faults.json", "client/main.go", "go.mod"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		data := ""
		if f == "go.mod" {
			data = "module seedfall.examples/leveldb\n\nrequire github.com/seedfall/seedfall v0.0.0-00010101000000-000000000000\n"
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(checkExample(dir, kept{}), "\n")
	for _, want := range []string{
		"no main config seedfall.json",
		"no seedfall_test.go",
		"no server/ or node/",
		"leveldb.json: configs are",
		"leveldb.nosync.json: configs are",
		"leveldb_test.go: test files are",
		"go.mod: no line module github.com/seedfall/seedfall/examples/leveldb",
		"go.mod: no line github.com/seedfall/seedfall v0.0.0",
		"go.mod: no line replace",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not include %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "faults.json") || strings.Contains(got, "client/") {
		t.Errorf("a fault plan or the client was reported:\n%s", got)
	}
	// Kept names pass.
	if got := checkExample(dir, kept{main: "leveldb.json", names: []string{"leveldb.*.json", "leveldb_test.go", "v1/"}}); strings.Contains(strings.Join(got, "\n"), "leveldb.") {
		t.Errorf("kept names were reported: %v", got)
	}
}

// TestPerGoRunsOnBothReleases: every test that keeps a value per Go release
// (exampletest.PerGo) is one .ci/run also runs on the other release, so neither value
// can go stale unseen.
func TestPerGoRunsOnBothReleases(t *testing.T) {
	run, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*/*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range files {
		dir := filepath.Dir(f)
		if dir == "exampletest" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		test := ""
		for _, l := range strings.Split(string(data), "\n") {
			if name, ok := strings.CutPrefix(l, "func Test"); ok {
				test, _, _ = strings.Cut("Test"+name, "(")
			}
			if !strings.Contains(l, "exampletest.PerGo(") || test == "" {
				continue
			}
			found++
			ran := false
			for _, r := range strings.Split(string(run), "\n") {
				if !strings.Contains(r, `"`+dir+" ") && !strings.Contains(r, "examples/"+dir+" ") {
					continue
				}
				for _, w := range strings.FieldsFunc(r, func(c rune) bool { return c == '|' || c == ' ' || c == '\'' || c == '"' }) {
					ran = ran || w == test
				}
			}
			if !ran {
				t.Errorf("%s: %s keeps a value per Go release, but .ci/run does not run it on the other release: add it to the pergo list", f, test)
			}
		}
	}
	if found < 10 {
		t.Errorf("found %d PerGo call sites; the scan is broken", found)
	}
}
