package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/ci"
	"github.com/seedfall/seedfall/engine"
)

var updateReport = flag.Bool("update-report", false, "rewrite testdata/report/ from this build's `seedfall report` (or from $SEEDFALL_REPORT_BIN when set)")

// reportGolden is where TestReportGolden's expected output lives: one folder per case
// with exit, stdout, stderr and the rendered files.
var reportGolden = filepath.Join("testdata", "report")

// reportFiles are the rendered files the golden test compares byte for byte; results.jsonl
// holds wall-clock times, so it is compared with its input instead.
var reportFiles = []string{ci.ReportHTML, ci.ReportMarkdown, ci.JUnitXML}

type reportCase struct {
	name string
	args []string // after "report"; $IN and $OUT are replaced
	in   string   // the results file, whose bytes results.jsonl must repeat
}

// reportInputs builds the golden test's inputs from real sweeps: kvlog's buggy sweep of
// seeds 1-200 (shared with other tests) and a lost-write sweep of seeds 201-230. Files
// are written into dir.
func reportInputs(t *testing.T, dir string) {
	t.Helper()
	sweepBuggy(t)
	write := func(name string, lines []string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("fail.jsonl", buggySweep.lines)
	var pass, shard1, shard2, noConfig []string
	for i, l := range buggySweep.lines {
		if buggySweep.results[i]["verdict"] == "pass" {
			pass = append(pass, l)
			var r engine.Result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			r.Provenance = nil
			var buf bytes.Buffer
			if err := ci.WriteResults(&buf, []engine.Result{r}); err != nil {
				t.Fatal(err)
			}
			noConfig = append(noConfig, strings.TrimSuffix(buf.String(), "\n"))
		}
		if i < 60 && i%2 == 0 {
			shard1 = append(shard1, l)
		} else if i < 60 {
			shard2 = append(shard2, l)
		}
	}
	write("pass.jsonl", pass)
	write("noconfig.jsonl", noConfig)
	write("shard1.jsonl", shard1)
	write("shard2.jsonl", shard2)
	if code, _, stderr := runCLI(t, "merge", "-o", filepath.Join(dir, "merged.jsonl"), filepath.Join(dir, "shard1.jsonl"), filepath.Join(dir, "shard2.jsonl")); code != exitPass {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	lw := filepath.Join(dir, "lostwrite.jsonl")
	lostWrite := filepath.Join("..", "..", "examples", "kvlog", "seedfall.lost_write.json")
	if code, _, stderr := runCLI(t, "run", "-c", lostWrite, "-seeds", "201-230", "-workers", "2", "-q", "-out", lw); code != exitFail {
		t.Fatalf("lost-write sweep: exit %d, want %d\n%s", code, exitFail, stderr)
	}
	lwLines, _ := readResults(t, lw)
	write("mixed.jsonl", append(append([]string(nil), buggySweep.lines...), lwLines...))

	// A baseline that knows kvlog's signature (with a shrunk plan), a signature whose
	// swept seed passes now (fixed), one whose seeds were not swept (neither), one
	// fixed long ago, and a mutation result.
	var sig string
	for _, r := range buggySweep.results {
		if f, ok := r["failure"].(map[string]any); ok {
			sig = f["signature"].(string)
			break
		}
	}
	var plan engine.FaultPlan
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "kvlog", "seed-2.faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &plan); err != nil {
		t.Fatal(err)
	}
	sha := func(c string) string { return strings.Repeat(c, 40) }
	base := map[string]any{
		"version": 1,
		"signatures": map[string]map[string]any{
			sig:                {"kind": "workload-exit", "reason": "acknowledged write lost", "seeds": []uint64{2, 5}, "shrunk": plan.Faults, "first_seen": sha("1"), "last_seen": sha("2"), "status": "failing", "first_run": 5, "last_run": 7},
			"sig-000000000001": {"kind": "workload-exit", "reason": "old bug", "seeds": []uint64{firstPassing(t), 4000}, "first_seen": sha("3"), "last_seen": sha("3"), "status": "failing", "crash_placement": engine.PlacementSpread},
			"sig-000000000002": {"kind": "workload-exit", "reason": "unswept bug", "seeds": []uint64{5000}, "first_seen": sha("4"), "last_seen": sha("4"), "status": "failing"},
			"sig-000000000003": {"kind": "workload-exit", "reason": "long fixed", "seeds": []uint64{6}, "first_seen": sha("5"), "last_seen": sha("5"), "status": "fixed", "fixed_in": sha("6")},
		},
		"mutation": map[string]any{"score": "2/3", "run": 7, "mutants": []map[string]any{
			{"name": "skip-fsync", "site": "kvlog/kvstore/kvstore.go:138", "killed": true, "seed": 2, "outcome": "killed", "reason": "acknowledged write lost"},
			{"name": "skip-dir-fsync", "site": "kvlog/kvstore/kvstore.go:220", "killed": false, "outcome": "survived"},
			{"name": "reorder", "killed": false, "outcome": "n/a", "reason": "no site"},
		}},
	}
	data, err := json.MarshalIndent(base, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "baseline.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// firstPassing is the lowest passing seed of the buggy sweep.
func firstPassing(t *testing.T) uint64 {
	for _, r := range buggySweep.results {
		if r["verdict"] == "pass" {
			return uint64(r["seed"].(float64))
		}
	}
	t.Fatal("no seed of the buggy sweep passes")
	return 0
}

var reportCases = []reportCase{
	{"pass", []string{"-in", "$IN/pass.jsonl", "-out", "$OUT"}, "pass.jsonl"},
	{"fail", []string{"-in", "$IN/fail.jsonl", "-out", "$OUT"}, "fail.jsonl"},
	{"merged", []string{"-in", "$IN/merged.jsonl", "-out", "$OUT"}, "merged.jsonl"},
	{"mixed", []string{"-in", "$IN/mixed.jsonl", "-out", "$OUT"}, "mixed.jsonl"},
	{"baseline", []string{"-in", "$IN/fail.jsonl", "-baseline", "$IN/baseline.json", "-out", "$OUT"}, "fail.jsonl"},
	{"baseline-pass", []string{"-in", "$IN/pass.jsonl", "-baseline", "$IN/baseline.json", "-out", "$OUT"}, "pass.jsonl"},
	{"baseline-missing", []string{"-in", "$IN/fail.jsonl", "-baseline", "$IN/none.json", "-out", "$OUT"}, "fail.jsonl"},
	{"config-given", []string{"-in", "$IN/fail.jsonl", "-c", "other.json", "-out", "$OUT"}, "fail.jsonl"},
	{"noconfig-c", []string{"-in", "$IN/noconfig.jsonl", "-c", "../../examples/kvlog/seedfall.fixed.json", "-out", "$OUT"}, "noconfig.jsonl"},
	{"noconfig", []string{"-in", "$IN/noconfig.jsonl", "-out", "$OUT"}, ""},
	{"empty", []string{"-in", "$IN/empty.jsonl", "-out", "$OUT"}, ""},
	{"no-in", []string{"-out", "$OUT"}, ""},
	{"extra-arg", []string{"-in", "$IN/pass.jsonl", "-out", "$OUT", "extra"}, ""},
}

// reportRun is one case's outcome: exit code, stdout, stderr (paths under the test's
// directory as $TMP) and the rendered files.
type reportRun struct {
	files map[string][]byte // "exit", "stdout", "stderr" and reportFiles
}

func runReportCase(t *testing.T, bin, dir string, c reportCase) reportRun {
	t.Helper()
	out := filepath.Join(dir, "out-"+c.name)
	var args []string
	for _, a := range c.args {
		a = strings.ReplaceAll(a, "$IN", dir)
		args = append(args, strings.ReplaceAll(a, "$OUT", out))
	}
	var code int
	var stdout, stderr string
	if bin == "" {
		code, stdout, stderr = runCLI(t, append([]string{"report"}, args...)...)
	} else {
		cmd := exec.Command(bin, append([]string{"report"}, args...)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code, stdout, stderr = cmd.ProcessState.ExitCode(), o.String(), e.String()
	}
	r := reportRun{files: map[string][]byte{
		"exit":   []byte(fmt.Sprintf("%d\n", code)),
		"stdout": []byte(strings.ReplaceAll(stdout, dir, "$TMP")),
		"stderr": []byte(strings.ReplaceAll(stderr, dir, "$TMP")),
	}}
	for _, name := range reportFiles {
		if b, err := os.ReadFile(filepath.Join(out, name)); err == nil {
			r.files[name] = b
		}
	}
	if c.in != "" {
		want, err := os.ReadFile(filepath.Join(dir, c.in))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(out, ci.ResultsJSONL)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: results.jsonl is not its input %s byte for byte (%d and %d bytes, %v)", c.name, c.in, len(got), len(want), err)
		}
	}
	return r
}

// goldenDiffs lists how run differs from the golden folder dir: a missing, extra or
// different file each.
func goldenDiffs(dir string, run reportRun) []string {
	var out []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{err.Error()}
	}
	onDisk := map[string]bool{}
	for _, e := range entries {
		onDisk[e.Name()] = true
		want, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		got, ok := run.files[e.Name()]
		switch {
		case !ok:
			out = append(out, e.Name()+": not written")
		case !bytes.Equal(got, want):
			out = append(out, fmt.Sprintf("%s: %d bytes differ from the golden %d bytes; got:\n%s", e.Name(), len(got), len(want), clip(got)))
		}
	}
	for name := range run.files {
		if !onDisk[name] {
			out = append(out, name+": written, but not in the golden folder")
		}
	}
	return out
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// TestReportGolden: `seedfall report` over real results (sweeps made here: a passing
// set, a failing kvlog sweep, merged shards, two signatures, a baseline with a shrunk
// plan and fixed signatures, -c, bad input) writes exactly the golden files: exit code,
// stdout, stderr, report.html, report.md and junit.xml, byte for byte, and repeats its
// input as results.jsonl. The goldens were recorded from seedfall 7ed36ea, whose report
// ran the whole Action with a fake engine (testdata/report/README.md says what was
// corrected since). Rerecord with -update-report after a deliberate change, and read
// the diff.
func TestReportGolden(t *testing.T) {
	dir := t.TempDir()
	reportInputs(t, dir)
	bin := os.Getenv("SEEDFALL_REPORT_BIN")
	for _, c := range reportCases {
		run := runReportCase(t, bin, dir, c)
		gd := filepath.Join(reportGolden, c.name)
		if *updateReport {
			if err := os.RemoveAll(gd); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(gd, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, b := range run.files {
				if err := os.WriteFile(filepath.Join(gd, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		for _, d := range goldenDiffs(gd, run) {
			t.Errorf("%s (seedfall report %s): %s", c.name, strings.Join(c.args, " "), d)
		}
	}
	if *updateReport {
		return
	}

	// Negative control: the comparison sees one changed byte, a missing file and an
	// extra one.
	run := runReportCase(t, bin, dir, reportCases[1])
	run.files[ci.ReportMarkdown] = append([]byte(nil), run.files[ci.ReportMarkdown]...)
	run.files[ci.ReportMarkdown][10] ^= 1
	delete(run.files, ci.JUnitXML)
	run.files["extra"] = nil
	if d := goldenDiffs(filepath.Join(reportGolden, "fail"), run); len(d) != 3 {
		t.Errorf("a changed, a missing and an extra file give %d differences, want 3: %q", len(d), d)
	}
}

// TestReportRefusesBadInput: bad input to `seedfall report` is an error naming the file
// and the line or field, with exit 2 and nothing rendered, never a panic or a GitHub
// workflow command. (The old report, which ran the Action, took a corrupt or branch:
// baseline with a ::warning and labelled every failure new.)
func TestReportRefusesBadInput(t *testing.T) {
	sweepBuggy(t)
	dir := t.TempDir()
	good := strings.Join(buggySweep.lines[:5], "\n") + "\n"
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	results := file("good.jsonl", good)
	lines := strings.SplitAfter(good, "\n")
	notAFile := file("plain", "x")
	for _, c := range []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"cut line", []string{"-in", file("cut.jsonl", lines[0]+lines[1]+lines[2][:40]+"\n"+lines[3])}, []string{"cut.jsonl:3: not a seedfall result"}},
		{"not an object", []string{"-in", file("array.jsonl", lines[0]+"[1, 2]\n")}, []string{"array.jsonl:2: not a seedfall result"}},
		{"unknown verdict", []string{"-in", file("verdict.jsonl", lines[0]+strings.Replace(lines[1], `"verdict":"`, `"verdict":"x`, 1))}, []string{"verdict.jsonl:2: field verdict: \"x"}},
		{"seed twice", []string{"-in", file("twice.jsonl", lines[0]+lines[1]+lines[0])}, []string{"seed 1 appears twice in", "twice.jsonl"}},
		{"missing", []string{"-in", filepath.Join(dir, "none.jsonl")}, []string{"none.jsonl: no such file"}},
		{"corrupt baseline", []string{"-in", results, "-baseline", file("base.json", `{"version": 1, "signatures": `)}, []string{"baseline " + filepath.Join(dir, "base.json") + ": invalid JSON"}},
		{"baseline version", []string{"-in", results, "-baseline", file("v9.json", `{"version": 9}`)}, []string{"v9.json: field version: 9"}},
		{"null entry", []string{"-in", results, "-baseline", file("null.json", `{"version": 1, "signatures": {"sig-0": null}}`)}, []string{"null.json: field signatures.sig-0: null"}},
		{"branch baseline", []string{"-in", results, "-baseline", "branch:data"}, []string{"-baseline branch:data: report reads a baseline file"}},
		{"empty -c", []string{"-in", results, "-c", ""}, []string{"-c: empty"}},
		{"out under a file", []string{"-in", results, "-out", filepath.Join(notAFile, "sub")}, []string{"report directory", "not a directory"}},
	} {
		out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
		args := append([]string{"report"}, c.args...)
		if c.name != "out under a file" {
			args = append(args, "-out", out)
		}
		code, stdout, stderr := runCLI(t, args...)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, code, exitUsage, stdout, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, w, stderr)
			}
		}
		if strings.Contains(stdout+stderr, "::") || strings.Contains(stderr, "merge:") || strings.Contains(stderr, "panic") {
			t.Errorf("%s: a workflow command, a merge: prefix or a panic:\n%s%s", c.name, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, ci.ReportHTML)); err == nil {
			t.Errorf("%s: rendered a report from bad input", c.name)
		}
	}
	// The control: the same results render.
	if code, stdout, stderr := runCLI(t, "report", "-in", results, "-out", filepath.Join(dir, "ok")); code == exitUsage {
		t.Errorf("good results: exit %d\n%s%s", code, stdout, stderr)
	}
}
