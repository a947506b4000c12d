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
