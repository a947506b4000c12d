// Package reach_test is the reach corpus (docs/reach.md): libraries at the versions their
// users have, each imported only from a simulation test of its own module under
// testdata/corpus, unmodified and with no port of seedfall's written for it. Each entry's
// test opens the library, writes with sync, is crashed with torn writes, reopens and reads
// back (examples/kvcheck's workload), over a few seeds.
//
// The compact set runs by default (.ci/run); SEEDFALL_REACH=1 runs every entry.
package reach_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

func TestMain(m *testing.M) { os.Exit(exampletest.Main(m)) }

// entry is one module version of the corpus.
type entry struct {
	dir             string // under testdata/corpus
	module, version string
	// compact entries run by default; the rest with SEEDFALL_REACH=1.
	compact bool
	// known is a finding the smoke test finds on this version: a line the first
	// failing seed's trace holds. "" means every seed passes.
	known string
}

// seeds is the smoke test's seed range.
const seeds = "1-3"

var corpus = []entry{
	{dir: "bbolt-v1_3_5", module: "go.etcd.io/bbolt", version: "v1.3.5"},
	{dir: "bbolt-v1_3_6", module: "go.etcd.io/bbolt", version: "v1.3.6"},
	{dir: "bbolt-v1_3_7", module: "go.etcd.io/bbolt", version: "v1.3.7"},
	{dir: "bbolt-v1_3_8", module: "go.etcd.io/bbolt", version: "v1.3.8", compact: true},
	{dir: "bbolt-v1_3_9", module: "go.etcd.io/bbolt", version: "v1.3.9"},
	{dir: "bbolt-v1_3_10", module: "go.etcd.io/bbolt", version: "v1.3.10"},
	{dir: "bbolt-v1_3_11", module: "go.etcd.io/bbolt", version: "v1.3.11"},
	{dir: "bbolt-v1_3_12", module: "go.etcd.io/bbolt", version: "v1.3.12"},
	{dir: "bbolt-v1_4_0", module: "go.etcd.io/bbolt", version: "v1.4.0", compact: true},
	{dir: "bbolt-v1_4_3", module: "go.etcd.io/bbolt", version: "v1.4.3"},
	{dir: "bbolt-v1_5_0", module: "go.etcd.io/bbolt", version: "v1.5.0"},
	{dir: "boltdb-v1_3_1", module: "github.com/boltdb/bolt", version: "v1.3.1"},
	{dir: "badger-v2", module: "github.com/dgraph-io/badger/v2", version: "v2.2007.4"},
	{dir: "badger-v3", module: "github.com/dgraph-io/badger/v3", version: "v3.2103.5", known: "Create a new file"},
	{dir: "badger-v4_2_0", module: "github.com/dgraph-io/badger/v4", version: "v4.2.0", compact: true, known: "Create a new file"},
	{dir: "badger-v4_9_6", module: "github.com/dgraph-io/badger/v4", version: "v4.9.6", known: "Create a new file"},
	{dir: "ristretto-v0_1_1", module: "github.com/dgraph-io/ristretto", version: "v0.1.1", compact: true},
	{dir: "ristretto-v2_2_0", module: "github.com/dgraph-io/ristretto/v2", version: "v2.2.0"},
	{dir: "ristretto-v2_4_2", module: "github.com/dgraph-io/ristretto/v2", version: "v2.4.2"},
	{dir: "pebble-v1_1_5", module: "github.com/cockroachdb/pebble", version: "v1.1.5"},
	{dir: "pebble-v2_1_7", module: "github.com/cockroachdb/pebble/v2", version: "v2.1.7"},
	{dir: "goleveldb-v1_0_0", module: "github.com/syndtr/goleveldb", version: "v1.0.0", known: "manifest corrupted"},
	{dir: "goleveldb-2022", module: "github.com/syndtr/goleveldb", version: "v1.0.1-0.20220721030215-126854af5e6d"},
	{dir: "nutsdb-v1_0_4", module: "github.com/nutsdb/nutsdb", version: "v1.0.4", known: "acknowledged write lost"},
	{dir: "xsys-v0_15_0", module: "golang.org/x/sys", version: "v0.15.0", compact: true},
	{dir: "xsys-v0_20_0", module: "golang.org/x/sys", version: "v0.20.0"},
	{dir: "xsys-v0_25_0", module: "golang.org/x/sys", version: "v0.25.0"},
	{dir: "xsys-v0_30_0", module: "golang.org/x/sys", version: "v0.30.0"},
	{dir: "xsys-v0_35_0", module: "golang.org/x/sys", version: "v0.35.0"},
	{dir: "xsys-v0_40_0", module: "golang.org/x/sys", version: "v0.40.0"},
	{dir: "xsys-v0_44_0", module: "golang.org/x/sys", version: "v0.44.0"},
	{dir: "xsys-v0_50_0", module: "golang.org/x/sys", version: "v0.50.0"},
}

var failingSeed = regexp.MustCompile(`(?m)^FAIL seed (\d+) `)

// TestReach builds each entry's simulation test for the simulator and sweeps its seeds:
// every seed passes, or the entry's known finding is what fails.
func TestReach(t *testing.T) {
	all := os.Getenv("SEEDFALL_REACH") != ""
	for _, e := range corpus {
		t.Run(e.dir, func(t *testing.T) {
			if !e.compact && !all {
				t.Skip("not in the compact set; SEEDFALL_REACH=1 runs the whole corpus")
			}
			dir := filepath.Join("testdata", "corpus", e.dir)
			code, out := exampletest.RunIn(t, dir, "test", ".", "-seeds", seeds, "-q")
			t.Logf("%s@%s: %s", e.module, e.version, lastLine(out))
			if e.known == "" {
				exampletest.WantPass(t, code, out)
				return
			}
			m := failingSeed.FindStringSubmatch(out)
			if code != 1 || m == nil {
				t.Fatalf("exit %d, want the known finding (%q) on a seed of %s:\n%s", code, e.known, seeds, out)
			}
			_, trace := exampletest.RunIn(t, dir, "test", ".", "-seed", m[1])
			if !strings.Contains(trace, e.known) {
				t.Fatalf("seed %s fails, but its trace lacks the known finding's %q: a new failure\n%s", m[1], e.known, out)
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestCorpusComplete: every entry's module pins the version the table says (by require,
// or for x/sys, which seedfall's own module requires at a later version, by replace),
// imports the library from its test file only, and is in docs/reach.md's table; every
// directory of the corpus is an entry; the corpus is at least 30 module versions.
func TestCorpusComplete(t *testing.T) {
	if len(corpus) < 30 {
		t.Errorf("%d entries, want at least 30", len(corpus))
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "reach.md"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range corpus {
		dirs = append(dirs, e.dir)
		dir := filepath.Join("testdata", "corpus", e.dir)
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		pinned := strings.Contains(string(mod), "\t"+e.module+" "+e.version+"\n") ||
			strings.Contains(string(mod), "replace "+e.module+" => "+e.module+" "+e.version+"\n")
		if !pinned {
			t.Errorf("%s: go.mod does not pin %s@%s", e.dir, e.module, e.version)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(files) != 1 || !strings.HasSuffix(files[0], "_test.go") {
			t.Errorf("%s: Go files %v, want one _test.go file (the library imported from a test only)", e.dir, files)
		}
		row := "| " + e.module + "@" + e.version + " |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/reach.md has no row starting %q", row)
		}
	}
	ents, err := os.ReadDir(filepath.Join("testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ents {
		if !slices.Contains(dirs, d.Name()) {
			t.Errorf("testdata/corpus/%s is in no entry", d.Name())
		}
	}
}
