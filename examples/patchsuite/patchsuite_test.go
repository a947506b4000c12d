// Package patchsuite runs each library's own tests with the patches of examples/*/patches
// applied, natively on the host: a fix is worth sending upstream only if the library's
// test suite still passes with it. Each library module is copied at the version its
// example pins (from the module cache), each patch is applied to the copy with
// `git apply`, and the patched packages' `go test` runs in the copy.
//
// The default run checks finding 5's patches on one upstream test
// (`go test ./tsdb/wlog -run 'TestReader$'`): the library unpatched passes, the old patch
// (which rejects every zero-length fragment) fails it in TestReader/Reader/0, and the
// current patch passes. SEEDFALL_PATCHSUITE=1 runs every fix patch against its library's
// test packages (minutes, and it downloads the libraries' test dependencies).
package patchsuite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// patchCase is one patch of examples/<example>/patches and how to test it.
type patchCase struct {
	example string
	patch   string
	// pkgs are the packages to test, relative to the module root ("." for the root);
	// empty means the packages of the patched files.
	pkgs []string
	// run is the -run expression ("" runs every test of pkgs).
	run string
	// wantFail is set for a patch kept as a negative control: its test run must fail
	// and print wantFail.
	wantFail string
	// vetOff runs the tests without go test's vet step, for a library whose test files
	// fail today's vet before any test runs.
	vetOff bool
}

// cases lists every file in examples/*/patches; TestEveryPatchListed fails on one that
// is missing, so a new patch cannot skip this suite.
var cases = []patchCase{
	{example: "badger", patch: "fix-empty-file.patch"},
	{example: "badger", patch: "ristretto-new-file-dir-sync.patch"},
	// badger v1.6.2's histogram_test.go:31 converts an int64 to a string, which vet
	// (stringintconv) rejects before any test runs.
	{example: "badger-v1", patch: "badger-v1.6.2-replay-head.patch", vetOff: true},
	{example: "bbolt", patch: "fix-dir-fsync.patch"},
	{example: "bbolt", patch: "fix-torn-init.patch"},
	{example: "buntdb", patch: "shrink-fsync.patch"},
	{example: "diskqueue", patch: "fix-missing-metadata.patch"},
	{example: "diskqueue", patch: "fix-sync-before-ack.patch"},
	{example: "diskv", patch: "fix-dir-sync.patch"},
	{example: "dque", patch: "fix-dir-sync.patch"},
	{example: "dque", patch: "fix-only-segment.patch"},
	{example: "dque", patch: "fix-torn-record.patch"},
	{example: "etcd-server", patch: "bbolt-1.3.6-torn-init.patch"},
	// Finding 32's upstream fix alone, on v3.5.5: the backend's tests.
	{example: "etcd-server", patch: "etcd-3.5.5-precommit-hook-in-unsafecommit.patch"},
	{example: "etcdraft", patch: "snap-save-fsync-dir.patch"},
	{example: "etcdraft", patch: "wal-create-fsync-dir.patch"},
	{example: "goleveldb", patch: "fix-incomplete-first-current.patch"},
	// The filestore tests of nats-server take far longer than the rest together: the
	// stream-creation and recovery tests around the patched newFileStoreWithCreated.
	{example: "lotusdb", patch: "lotusdb-fix-index-nosync.patch"},
	{example: "lotusdb", patch: "lotusdb-fix-options-sync.patch"},
	{example: "lotusdb", patch: "wal-v1.3.6-truncate-torn-tail.patch"},
	{example: "nats", patch: "metasum-rewrite.patch", run: "TestFileStore(Basic|MsgHeaders|Recover|Meta|Create|StreamStateDeleted|Snapshot)"},
	{example: "nutsdb", patch: "fix-bucket-decode-before-crc.patch"},
	{example: "nutsdb", patch: "fix-bucket-meta-fsync-and-dir-fsync.patch"},
	{example: "nutsdb", patch: "fix-bucket-meta-fsync.patch"},
	{example: "nutsdb", patch: "fix-torn-tail.patch"},
	{example: "pogreb", patch: "fix-dir-fsync.patch", pkgs: []string{".", "./fs"}},
	{example: "pogreb", patch: "fix-recovery-truncate.patch", pkgs: []string{".", "./fs"}},
	{example: "pogreb", patch: "fix-record-size-before-alloc.patch", pkgs: []string{".", "./fs"}},
	{example: "prometheus-wlog", patch: "fix-repair-fsync-and-segment-dirsync.patch"},
	{example: "prometheus-wlog", patch: "fix-read-error-not-corruption.patch"},
	{example: "prometheus-wlog", patch: "fix-repair-fsync.patch"},
	{example: "prometheus-wlog", patch: "fix-torn-header.patch"},
	{example: "prometheus-wlog", patch: "old-fix-torn-header-rejects-empty.patch", run: "TestReader$", wantFail: "--- FAIL: TestReader/Reader/0"},
	{example: "pudge", patch: "fix-crash-safe-update-and-dir-fsync.patch"},
	{example: "pudge", patch: "fix-crash-safe-update.patch"},
	{example: "raft", patch: "snapshot-dir-fsync.patch", run: "Snapshot"},
	{example: "raft-boltdb", patch: "bbolt-1.3.5-dir-fsync.patch"},
	{example: "raft-wal", patch: "fix-sealed-tail-recovery.patch"},
	// Finding 39 (hashicorp/raft): the patch carries its own regression test,
	// TestRaft_BootstrapCluster_Crash; the rest of raft's suite is timing-sensitive
	// under load on both copies (examples/raft-wal/README.md).
	{example: "raft-wal", patch: "fix-bootstrap-order.patch", run: "Bootstrap|HasExistingState|RecoverCluster"},
	// v0.4.1's fix of raft-wal#31 taken out again: the library's own test of that fix
	// fails, as the simulation does.
	{example: "raft-wal", patch: "revert-forceseal.patch", run: "TestDeleteRange", wantFail: "--- FAIL: TestDeleteRange/non-deleting_tail-truncation"},
	{example: "rosedb", patch: "fix-options-sync.patch"},
	{example: "rosedb", patch: "wal-truncate-torn-tail.patch"},
	{example: "tidwall-wal", patch: "fix-truncate-and-dirsync.patch"},
	{example: "tidwall-wal", patch: "fix-truncate-dirsync-eio.patch"},
	{example: "tidwall-wal", patch: "pr22-skip-partial.patch"},
}

func TestEveryPatchListed(t *testing.T) {
	files, err := filepath.Glob("../*/patches/*.patch")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, c := range cases {
		listed[c.example+"/"+c.patch] = true
	}
	if len(files) == 0 {
		t.Fatal("no patches found under examples/*/patches")
	}
	for _, f := range files {
		key := filepath.Base(filepath.Dir(filepath.Dir(f))) + "/" + filepath.Base(f)
		if !listed[key] {
			t.Errorf("examples/%s is not in patchsuite's cases: add it with the library packages its fix must pass", strings.Replace(key, "/", "/patches/", 1))
		}
		delete(listed, key)
	}
	for k := range listed {
		t.Errorf("patchsuite lists %s, which does not exist", k)
	}
}

// TestTornHeaderPatches is the default-run check of finding 5's patches against the
// upstream test that caught the old one: the unpatched library passes TestReader, the
// old patch fails TestReader/Reader/0 (the writer's own zero-length fragment at a page
// end), and the current patch passes.
func TestTornHeaderPatches(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: copies prometheus and compiles tsdb/wlog's tests")
	}
	m := copyModule(t, t.TempDir(), "prometheus-wlog", "github.com/prometheus/prometheus/tsdb/wlog")
	if out, err := m.test(t, "TestReader$", "./tsdb/wlog"); err != nil {
		t.Fatalf("unpatched prometheus fails its own TestReader: %v\n%s", err, out)
	}
	for _, c := range []patchCase{
		{example: "prometheus-wlog", patch: "old-fix-torn-header-rejects-empty.patch", wantFail: "--- FAIL: TestReader/Reader/0"},
		{example: "prometheus-wlog", patch: "fix-torn-header.patch"},
	} {
		t.Run(c.patch, func(t *testing.T) {
			pkgs := m.apply(t, c.example, c.patch)
			out, err := m.test(t, "TestReader$", pkgs...)
			check(t, c, out, err)
		})
	}
}

// TestLibrarySuites runs every fix patch against its library's own tests.
func TestLibrarySuites(t *testing.T) {
	if os.Getenv("SEEDFALL_PATCHSUITE") == "" {
		t.Skip("set SEEDFALL_PATCHSUITE=1 to run every library's test suite with its patches (minutes)")
	}
	mods := map[string]*module{}
	base := t.TempDir() // the copies outlive each subtest
	for _, c := range cases {
		t.Run(c.example+"/"+c.patch, func(t *testing.T) {
			pkg := filePackages(t, c.example, c.patch)[0]
			m := mods[c.example+" "+pkg]
			if m == nil {
				m = copyModule(t, base, c.example, pkg)
				m.vetOff = c.vetOff
				mods[c.example+" "+pkg] = m
			}
			pkgs := m.apply(t, c.example, c.patch)
			if len(c.pkgs) > 0 {
				pkgs = c.pkgs
			}
			out, err := m.test(t, c.run, pkgs...)
			if err != nil && c.wantFail == "" {
				// A test that fails with the patch is run again, with and without
				// it: only a test that passes unpatched and fails patched counts
				// (some upstream tests fail on their own, or on a loaded machine).
				failed := failedTests(out)
				if len(failed) == 0 {
					check(t, c, out, err)
					return
				}
				run := "^(" + strings.Join(failed, "|") + ")$"
				out2, err2 := m.test(t, run, pkgs...)
				patched := m.snapshot(t)
				m.restore(t)
				out3, err3 := m.test(t, run, pkgs...)
				m.reapply(t, patched)
				switch {
				case err2 == nil:
					t.Logf("%s: %s failed once and passed when run again (flaky upstream)", c.patch, strings.Join(failed, ", "))
					err = nil
				case err3 != nil && sameSet(failedTests(out2), failedTests(out3)):
					// A failure the library has without the patch; a test that
					// panics also stops the tests after it, so run the rest.
					t.Logf("%s: %s fail without the patch too (pre-existing):\n%s", c.patch, strings.Join(failedTests(out3), ", "), tail(out3))
					out, err = m.testSkip(t, c.run, "^("+strings.Join(failedTests(out3), "|")+")$", pkgs...)
				default:
					out = out2
				}
			}
			check(t, c, out, err)
		})
	}
}

// failedTests returns the top-level tests that a go test output reports as failed.
func failedTests(out string) []string {
	seen := map[string]bool{}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		name, ok := strings.CutPrefix(line, "--- FAIL: ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		name, _, _ = strings.Cut(name, "/")
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func sameSet(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

func check(t *testing.T, c patchCase, out string, err error) {
	t.Helper()
	switch {
	case c.wantFail == "" && err != nil:
		t.Fatalf("%s breaks the library's own tests: %v\n%s", c.patch, err, tail(out))
	case c.wantFail != "" && err == nil:
		t.Fatalf("negative control %s passed the library's tests; it must fail with %q\n%s", c.patch, c.wantFail, tail(out))
	case c.wantFail != "" && !strings.Contains(out, c.wantFail):
		t.Fatalf("negative control %s failed, but not with %q: %v\n%s", c.patch, c.wantFail, err, tail(out))
	}
	t.Logf("%s: %s", c.patch, lastLine(out))
}

// module is a writable copy of one library module at the example's pinned version.
type module struct {
	path, version, cache, dir string
	touched                   map[string]bool // files a patch changed, relative to dir
	vetOff                    bool            // go test -vet=off (patchCase.vetOff)
}

// copyModule copies the module that provides pkg, at the version examples/<example>
// resolves, from the module cache into a new directory under base.
func copyModule(t *testing.T, base, example, pkg string) *module {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.Module.Path}}\t{{.Module.Version}}\t{{.Module.Dir}}", pkg)
	cmd.Dir = filepath.Join("..", example)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("examples/%s: go list %s: %v\n%s", example, pkg, err, stderr.String())
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\t")
	if len(f) != 3 || f[2] == "" {
		t.Fatalf("examples/%s: go list %s printed %q", example, pkg, out)
	}
	dir, err := os.MkdirTemp(base, "mod-")
	if err != nil {
		t.Fatal(err)
	}
	m := &module{path: f[0], version: f[1], cache: f[2], dir: dir, touched: map[string]bool{}}
	err = filepath.WalkDir(m.cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.cache, p)
		dst := filepath.Join(m.dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s@%s: %v", m.path, m.version, err)
	}
	// A released go.mod may replace sibling modules of its repository with relative
	// directories (etcd's server module: "../api"), which the module zip does not hold:
	// use the released versions instead.
	cmd = exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = m.dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("%s@%s: go mod edit -json: %v", m.path, m.version, err)
	}
	var gm struct {
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(out, &gm); err != nil {
		t.Fatal(err)
	}
	for _, r := range gm.Replace {
		if strings.HasPrefix(r.New.Path, ".") {
			old := r.Old.Path
			if r.Old.Version != "" {
				old += "@" + r.Old.Version
			}
			cmd := exec.Command("go", "mod", "edit", "-dropreplace", old)
			cmd.Dir = m.dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s@%s: drop replace %s: %v\n%s", m.path, m.version, old, err, out)
			}
		}
	}
	t.Logf("copied %s@%s", m.path, m.version)
	return m
}

// snapshot returns the current contents of the patched files.
func (m *module) snapshot(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for rel := range m.touched {
		data, err := os.ReadFile(filepath.Join(m.dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = data
	}
	return files
}

// restore puts back the module's original versions of the files patches changed.
func (m *module) restore(t *testing.T) {
	t.Helper()
	for rel := range m.touched {
		data, err := os.ReadFile(filepath.Join(m.cache, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(m.dir, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// reapply writes back the files snapshot returned.
func (m *module) reapply(t *testing.T, files map[string][]byte) {
	t.Helper()
	for rel, data := range files {
		if err := os.WriteFile(filepath.Join(m.dir, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// apply restores the files earlier patches changed, applies examples/<example>/patches/
// <patch> to the copy and returns the patched packages ("./dir").
func (m *module) apply(t *testing.T, example, patch string) []string {
	t.Helper()
	m.restore(t)
	src := filepath.Join("..", example, "patches", patch)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// Import-path names ("a/github.com/x/y/file.go") become module-relative ones.
	var buf bytes.Buffer
	pkgs := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, p := range []string{"--- a/", "+++ b/"} {
			if strings.HasPrefix(line, p) {
				name := strings.TrimPrefix(line, p)
				rel, ok := strings.CutPrefix(name, m.path+"/")
				if !ok {
					t.Fatalf("%s: %s is not in module %s", src, name, m.path)
				}
				line = p + rel
				m.touched[rel] = true
				pkgs["./"+path.Dir(rel)] = true
			}
		}
		buf.WriteString(line + "\n")
	}
	cmd := exec.Command("git", "apply", "--verbose", "-")
	cmd.Dir = m.dir
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s does not apply to %s@%s: %v\n%s", src, m.path, m.version, err, out)
	}
	var list []string
	for p := range pkgs {
		list = append(list, strings.TrimSuffix(p, "/."))
	}
	sort.Strings(list)
	return list
}

// test runs `go test [-run run] pkgs...` in the copy and returns its output.
func (m *module) test(t *testing.T, run string, pkgs ...string) (string, error) {
	t.Helper()
	return m.testSkip(t, run, "", pkgs...)
}

// testSkip is test with -skip skip.
func (m *module) testSkip(t *testing.T, run, skip string, pkgs ...string) (string, error) {
	t.Helper()
	// A library's whole suite can pass go test's default 10 minutes on a loaded
	// 2-core machine (bbolt's did, at load 13): give it half an hour.
	args := []string{"test", "-count=1", "-timeout", "30m"}
	if m.vetOff {
		args = append(args, "-vet=off")
	}
	if run != "" {
		args = append(args, "-run", run)
	}
	if skip != "" {
		args = append(args, "-skip", skip)
	}
	args = append(args, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = m.dir
	// The copy is its own main module: no workspace (prometheus ships a go.work naming
	// directories the module zip leaves out), and go.sum may lack test-only modules.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false")
	out, err := cmd.CombinedOutput()
	t.Logf("go %s (in %s@%s)", strings.Join(args, " "), m.path, m.version)
	return string(out), err
}

// filePackages returns the import paths of the packages a patch edits.
func filePackages(t *testing.T, example, patch string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", example, "patches", patch))
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "--- a/"); ok {
			pkgs = append(pkgs, path.Dir(name))
		}
	}
	if len(pkgs) == 0 {
		t.Fatalf("examples/%s/patches/%s names no file (want \"--- a/<import path>/<file>\")", example, patch)
	}
	return pkgs
}

func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
