package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCover: `run -cover DIR` over worker processes writes Go's coverage data, which
// go tool covdata reads, merged across the sweep; the summary has the per-package
// percentages and the unreached functions; -check stays identical with coverage on;
// and the same sweep in this process writes byte-identical files.
func TestRunCover(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(testdata, "cover", "seedfall.json")
	workers := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "-c", cfg, "-seeds", "1-6", "-workers", "2", "-check", "-cover", workers, "-json", "-q")
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sum struct {
		Checked  bool `json:"checked"`
		Diverged int  `json:"diverged"`
		Coverage struct {
			Packages []struct {
				Path    string  `json:"path"`
				Percent float64 `json:"percent"`
			} `json:"packages"`
			Unreached []struct {
				Func string `json:"func"`
			} `json:"unreached_funcs"`
		} `json:"coverage"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !sum.Checked || sum.Diverged != 0 {
		t.Errorf("-check with coverage: checked %v, %d diverged", sum.Checked, sum.Diverged)
	}
	server := -1.0
	for _, p := range sum.Coverage.Packages {
		if strings.HasSuffix(p.Path, "cover/server") {
			server = p.Percent
		}
	}
	if len(sum.Coverage.Packages) != 3 || server <= 0 || server >= 100 {
		t.Errorf("coverage packages %+v, want client, lib and server, server partly covered", sum.Coverage.Packages)
	}
	if len(sum.Coverage.Unreached) != 1 || sum.Coverage.Unreached[0].Func != "neverCalled" {
		t.Errorf("unreached functions %+v, want neverCalled only", sum.Coverage.Unreached)
	}
	out, err := exec.Command("go", "tool", "covdata", "percent", "-i", workers).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("cover/server\t\tcoverage: ")) {
		t.Errorf("go tool covdata percent: %v\n%s", err, out)
	}

	inproc := t.TempDir()
	code, stdout, stderr = runCLI(t, "run", "-c", cfg, "-seeds", "1-6", "-inproc", "-cover", inproc, "-q")
	if code != exitPass || !strings.Contains(stdout, "1 function no seed reached") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	a, _ := filepath.Glob(filepath.Join(workers, "cov*"))
	b, _ := filepath.Glob(filepath.Join(inproc, "cov*"))
	if len(a) != 4 || len(b) != len(a) {
		t.Fatalf("files %v and %v, want a meta-data and a counter file per binary", a, b)
	}
	for i := range a {
		x, _ := os.ReadFile(a[i])
		y, _ := os.ReadFile(b[i])
		if filepath.Base(a[i]) != filepath.Base(b[i]) || !bytes.Equal(x, y) {
			t.Errorf("%s differs between worker processes and in-process", filepath.Base(a[i]))
		}
	}

	// -cover needs the config field.
	code, _, stderr = runCLI(t, "run", "-c", filepath.Join(testdata, "hello", "seedfall.json"), "-seeds", "1", "-cover", t.TempDir(), "-q")
	if code != exitUsage || !strings.Contains(stderr, `"coverage" field`) {
		t.Errorf("-cover without the field: exit %d, stderr %q", code, stderr)
	}
}

// TestReportCover: a results file of a sweep with coverage keeps each seed's coverage,
// and the HTML report rendered from it lists the functions no seed reached.
func TestReportCover(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	code, stdout, stderr := runCLI(t, "run", "-c", filepath.Join(testdata, "cover", "seedfall.json"), "-seeds", "1-3", "-workers", "2", "-q", "-out", results)
	if code != exitPass {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, rs := readResults(t, results)
	for _, r := range rs {
		if _, ok := r["coverage"]; !ok {
			t.Fatalf("seed %v: no coverage in the results file", r["seed"])
		}
	}
	out := filepath.Join(dir, "report")
	if code, stdout, stderr = runCLI(t, "report", "-in", results, "-out", out); code != exitPass {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Functions no seed reached (1)", `<td class="mono">neverCalled</td>`, "cover/server"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(string(html), `<td class="mono">recoverFromMarker</td>`) {
		t.Errorf("report.html lists recoverFromMarker, which ran after a crash, as unreached")
	}
}

// TestCoverProfileReadsPatchedSources: with a node's patches, `run -cover DIR` writes
// DIR/profile.out, which `go tool cover -func` reads from any directory against the
// patched sources the node was built from, so it agrees with `go tool covdata func`
// on the same data (issue 35 point 1, examples/tidwall-wal/tidwall.cover.json). The
// control: the plain textfmt profile, read against the unpatched module, disagrees.
func TestCoverProfileReadsPatchedSources(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join("..", "..", "examples", "tidwall-wal", "tidwall.cover.json")
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "run", "-c", cfg, "-seeds", "1-2", "-workers", "2", "-cover", dir, "-q")
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "go tool cover -html "+filepath.Join(dir, "profile.out")) {
		t.Errorf("the summary does not name the profile:\n%s", stdout)
	}
	total := func(out []byte) string {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		f := strings.Fields(lines[len(lines)-1])
		return f[len(f)-1]
	}
	tool := func(wd string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command("go", append([]string{"tool"}, args...)...)
		cmd.Dir = wd
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go tool %v (in %s): %v\n%s", args, wd, err, out)
		}
		return out
	}
	anywhere := t.TempDir()
	covdata := total(tool(anywhere, "covdata", "func", "-i", dir))
	cover := total(tool(anywhere, "cover", "-func", filepath.Join(dir, "profile.out")))
	if cover != covdata {
		t.Errorf("go tool cover -func says %s, go tool covdata func %s", cover, covdata)
	}
	patched, err := os.ReadFile(filepath.Join(dir, "src", "github.com", "tidwall", "wal", "wal.go"))
	if err != nil || !bytes.Contains(patched, []byte("Sync")) {
		t.Errorf("no patched copy of wal.go under %s/src: %v", dir, err)
	}
	// The control: covdata's own textfmt names the module's unpatched wal.go, and cover
	// reading that (from the example's module) counts other functions.
	raw := filepath.Join(t.TempDir(), "raw.out")
	tool(anywhere, "covdata", "textfmt", "-i", dir, "-o", raw)
	if unpatched := total(tool(filepath.Dir(cfg), "cover", "-func", raw)); unpatched == covdata {
		t.Errorf("control: cover -func on the unpatched sources also says %s: this test no longer sees the difference", unpatched)
	} else {
		t.Logf("control: against the unpatched module cover -func says %s, covdata %s", unpatched, covdata)
	}
	// The README's cover commands are the ones that work from the repository root.
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "$ go tool cover -html cover/profile.out") || strings.Contains(string(readme), "go tool cover -html cover.out") {
		t.Error("the README's cover commands are not the profile.out ones that work from any directory")
	}
}
