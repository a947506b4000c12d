package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// testEvent is one event of the stream `go test -json` prints (cmd/test2json's
// TestEvent), which gotestsum, go-junit-report, editors' test explorers and CI test
// reporters read.
type testEvent struct {
	Time    *time.Time `json:",omitempty"`
	Action  string
	Package string   `json:",omitempty"`
	Test    string   `json:",omitempty"`
	Elapsed *float64 `json:",omitempty"`
	Output  *string  `json:",omitempty"`
}

// test2json writes the events of `seedfall test -json`: a package per simulation
// test package, a test per simulation test, and a subtest per failing seed
// (TestX/seed=81) whose output is the failure, its faults and its replay command.
type test2json struct {
	enc   *json.Encoder
	now   func() time.Time
	start map[string]time.Time // package -> when its first test started
	fail  map[string]bool      // package -> a test of it failed
}

func newTest2JSON(w io.Writer) *test2json {
	return &test2json{enc: json.NewEncoder(w), now: time.Now, start: map[string]time.Time{}, fail: map[string]bool{}}
}

func (j *test2json) emit(e testEvent) {
	t := j.now()
	e.Time = &t
	j.enc.Encode(e)
}

func (j *test2json) output(pkg, test, text string) {
	for _, l := range strings.SplitAfter(text, "\n") {
		if l == "" {
			continue
		}
		if !strings.HasSuffix(l, "\n") {
			l += "\n"
		}
		j.emit(testEvent{Action: "output", Package: pkg, Test: test, Output: &l})
	}
}

func (j *test2json) end(pkg, test, action string, elapsed time.Duration) {
	s := elapsed.Seconds()
	j.emit(testEvent{Action: action, Package: pkg, Test: test, Elapsed: &s})
}

// beginTest starts test of package pkg (and the package, at its first test).
func (j *test2json) beginTest(pkg, test string) {
	if _, ok := j.start[pkg]; !ok {
		j.start[pkg] = j.now()
		j.emit(testEvent{Action: "start", Package: pkg})
	}
	j.emit(testEvent{Action: "run", Package: pkg, Test: test})
	j.output(pkg, test, "=== RUN   "+test+"\n")
}

// endTest ends test with the sweep's results (nil when it did not sweep: the
// preflight refused it, with text saying why) and its closing lines.
func (j *test2json) endTest(pkg, test string, results []engine.Result, text string, code int, elapsed time.Duration) {
	sort.Slice(results, func(a, b int) bool { return results[a].Seed < results[b].Seed })
	for i := range results {
		r := &results[i]
		if !r.Failed() {
			continue
		}
		sub := fmt.Sprintf("%s/seed=%d", test, r.Seed)
		j.emit(testEvent{Action: "run", Package: pkg, Test: sub})
		j.output(pkg, sub, "=== RUN   "+sub+"\n")
		var b strings.Builder
		printFailure(&b, r, testConfigPath(r), "")
		j.output(pkg, sub, indent(b.String()))
		j.output(pkg, sub, fmt.Sprintf("    --- FAIL: %s (%.2fs)\n", sub, 0.0))
		j.end(pkg, sub, "fail", 0)
	}
	j.output(pkg, test, indent(withoutFailures(text)))
	action, word := "pass", "PASS"
	if code != exitPass {
		action, word = "fail", "FAIL"
		j.fail[pkg] = true
	}
	j.output(pkg, test, fmt.Sprintf("--- %s: %s (%.2fs)\n", word, test, elapsed.Seconds()))
	j.end(pkg, test, action, elapsed)
}

// endPackages closes every package started, in order.
func (j *test2json) endPackages(order []string) {
	for _, pkg := range order {
		start, ok := j.start[pkg]
		if !ok {
			continue
		}
		el := j.now().Sub(start)
		if j.fail[pkg] {
			j.output(pkg, "", "FAIL\n")
			j.output(pkg, "", fmt.Sprintf("FAIL\t%s\t%.3fs\n", pkg, el.Seconds()))
			j.end(pkg, "", "fail", el)
		} else {
			j.output(pkg, "", "PASS\n")
			j.output(pkg, "", fmt.Sprintf("ok  \t%s\t%.3fs\n", pkg, el.Seconds()))
			j.end(pkg, "", "pass", el)
		}
	}
}

// testConfigPath is the config a result's replay command names (the derived test's,
// which cli.ReplayCommand turns into `seedfall test … -seed N`).
func testConfigPath(r *engine.Result) string {
	if r.Provenance != nil {
		return r.Provenance.Config
	}
	return ""
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l == "" || l == "\n" {
			b.WriteString(l)
			continue
		}
		b.WriteString("    " + l)
	}
	return b.String()
}

// readResultsFile reads the results `seedfall run -out` wrote.
func readResultsFile(path string) ([]engine.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []engine.Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		var r engine.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// withoutFailures is a sweep's text without its failure blocks ("FAIL seed N …" and
// the indented lines under it), which the seeds' subtests carry.
func withoutFailures(text string) string {
	var b strings.Builder
	skip := false
	for _, l := range strings.SplitAfter(text, "\n") {
		switch {
		case strings.HasPrefix(l, "FAIL seed "):
			skip = true
			continue
		case skip && (strings.HasPrefix(l, " ") || strings.TrimSpace(l) == ""):
			if strings.TrimSpace(l) == "" {
				skip = false
			}
			continue
		}
		skip = false
		b.WriteString(l)
	}
	return b.String()
}
