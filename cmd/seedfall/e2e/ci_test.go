// End-to-end test of `seedfall ci` (issue 7, acceptance 1): the real command, real
// builds of examples/kvlog and worker processes, the GitHub Actions environment faked
// with files and a fake REST API (internal/githubtest).

package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/ci"
	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/githubtest"
)

// ciSeeds is a small range of kvlog seeds holding exactly one failing seed with the
// buggy config (seed 2 loses an acknowledged write; the next are 66, 69 and 93).
const ciSeeds = "1-12"

const (
	ciRepo   = "o/r"
	ciPR     = 7
	ciBranch = "seedfall-baseline"
)

// ciRun is one `seedfall ci` run and what it left behind.
type ciRun struct {
	code             int
	stdout, stderr   string
	outputs          map[string]string
	summary          string
	out              string // the -out directory
	elapsed          time.Duration
	outputsRaw, name string
}

// runCI runs `seedfall ci` for a GitHub event (name, payload) with GITHUB_* variables
// pointing at fresh files and at the fake API, and reads the outputs and summary back.
func runCI(t *testing.T, gh *githubtest.FakeGitHub, step, event string, payload map[string]any, sha string, runID int, config string) *ciRun {
	t.Helper()
	return runCIWith(t, gh, step, event, payload, sha, runID, "-c", config, "-seeds", ciSeeds,
		"-baseline", "branch:"+ciBranch, "-shrink-budget", "20s", "-fail-on", "new")
}

// runCIWith is runCI with the sweep's own flags (all but -out).
func runCIWith(t *testing.T, gh *githubtest.FakeGitHub, step, event string, payload map[string]any, sha string, runID int, args ...string) *ciRun {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	evPath := filepath.Join(dir, "event.json")
	if err := os.WriteFile(evPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	outputPath := filepath.Join(dir, "github_output")
	summaryPath := filepath.Join(dir, "step_summary.md")
	for _, p := range []string{outputPath, summaryPath} { // the runner creates them empty
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := "refs/pull/7/merge"
	if event == "push" {
		ref = payload["ref"].(string)
	}
	for k, v := range map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_EVENT_NAME":   event,
		"GITHUB_EVENT_PATH":   evPath,
		"GITHUB_REPOSITORY":   ciRepo,
		"GITHUB_API_URL":      gh.URL(),
		"GITHUB_SERVER_URL":   "https://github.example",
		"GITHUB_OUTPUT":       outputPath,
		"GITHUB_STEP_SUMMARY": summaryPath,
		"GITHUB_TOKEN":        "fake-token",
		"GITHUB_SHA":          sha,
		"GITHUB_REF":          ref,
		"GITHUB_RUN_ID":       fmt.Sprint(runID),
		"GITHUB_WORKSPACE":    filepath.Join("..", "..", ".."),
	} {
		t.Setenv(k, v)
	}
	r := &ciRun{out: filepath.Join(dir, "out"), name: step}
	start := time.Now()
	r.code, r.stdout, r.stderr = runCLI(t, append(append([]string{"ci"}, args...), "-out", r.out)...)
	r.elapsed = time.Since(start)
	raw, err := os.ReadFile(outputPath)
	if err != nil {
		t.Fatal(err)
	}
	r.outputsRaw = string(raw)
	r.outputs = parseGitHubOutput(t, r.outputsRaw)
	b, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	r.summary = string(b)
	if _, err := os.Stat(filepath.Join(r.out, ci.ReportHTML)); err != nil {
		t.Errorf("%s: no HTML report: %v", step, err)
	}
	if got, want := r.outputs["report"], filepath.Join(r.out, ci.ReportHTML); got != want {
		t.Errorf("%s: output report = %q, want %q", step, got, want)
	}
	return r
}

// parseGitHubOutput reads a GITHUB_OUTPUT file: "key=value" lines and
// "key<<DELIMITER" ... "DELIMITER" blocks (as go-githubactions writes them).
func parseGitHubOutput(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var val []string
			closed := false
			for i++; i < len(lines); i++ {
				if lines[i] == delim {
					closed = true
					break
				}
				val = append(val, lines[i])
			}
			if !closed {
				t.Fatalf("GITHUB_OUTPUT: %q has no closing %q:\n%s", k, delim, s)
			}
			out[k] = strings.Join(val, "\n")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT: malformed line %q:\n%s", line, s)
		}
		out[k] = v
	}
	return out
}

func (r *ciRun) wantOutputs(t *testing.T, code int, newN, known, fixed, conclusion string) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr (tail):\n%s", r.name, r.code, code, r.stdout, tail(r.stderr, 2000))
	}
	want := map[string]string{"new": newN, "known": known, "fixed": fixed, "conclusion": conclusion}
	for k, v := range want {
		if r.outputs[k] != v {
			t.Errorf("%s: output %s = %q, want %q\nGITHUB_OUTPUT:\n%s", r.name, k, r.outputs[k], v, r.outputsRaw)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func ciPREvent(headSHA string) map[string]any {
	return map[string]any{
		"action": "synchronize",
		"number": ciPR,
		"pull_request": map[string]any{
			"number": ciPR,
			"head":   map[string]any{"sha": headSHA, "ref": "feature", "repo": map[string]any{"full_name": ciRepo}},
			"base":   map[string]any{"ref": "main", "repo": map[string]any{"full_name": ciRepo}},
		},
		"repository": map[string]any{"full_name": ciRepo, "default_branch": "main"},
	}
}

func ciPushEvent(after string) map[string]any {
	return map[string]any{
		"ref": "refs/heads/main", "before": strings.Repeat("0", 40), "after": after,
		"repository": map[string]any{"full_name": ciRepo, "default_branch": "main"},
	}
}

// kvstoreAnnotation is the workflow command that annotates kvlog's failure in its
// repository file, mapped from the guest's module path through go.mod.
var kvstoreAnnotation = regexp.MustCompile(`(?m)^::error file=examples/kvlog/kvstore/kvstore\.go,line=[1-9][0-9]*,title=seedfall new failure::sig-[0-9a-f]{12}: client#1: acknowledged write lost`)

// TestCIAnnotatesRepositoryLine (issue 27, acceptance 2): `seedfall ci` run locally from
// the repository's root on examples/kvlog with GITHUB_ACTIONS=true prints an ::error
// annotation at examples/kvlog/kvstore/kvstore.go and a line. Negative control: with the
// workspace elsewhere, the module is not the repository's and the annotation has no file.
func TestCIAnnotatesRepositoryLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kvlog and sweeps one seed: skipped in -short")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	t.Setenv("GITHUB_ACTIONS", "true")
	for _, k := range []string{"GITHUB_WORKSPACE", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_TOKEN"} {
		t.Setenv(k, "")
	}
	// No crash-state search: the annotation of a swept seed's failure is what is checked
	// (TestCIEndToEnd runs the search).
	args := []string{"ci", "-c", "examples/kvlog/seedfall.json", "-seeds", "2", "-crash-seeds", "", "-shrink-budget", "0s", "-out", t.TempDir()}
	code, stdout, stderr := runCLI(t, args...)
	if code != exitFail || !kvstoreAnnotation.MatchString(stdout) {
		t.Fatalf("exit %d, want %d and an annotation matching %s\nstdout:\n%s\nstderr:\n%s", code, exitFail, kvstoreAnnotation, stdout, tail(stderr, 2000))
	}
	t.Setenv("GITHUB_WORKSPACE", t.TempDir())
	_, stdout, _ = runCLI(t, args...)
	if strings.Contains(stdout, "::error file=") || !strings.Contains(stdout, "::error title=seedfall new failure::") {
		t.Errorf("with the workspace elsewhere: want an annotation without a file:\n%s", stdout)
	}
}

var replayCmd = regexp.MustCompile(`seedfall replay -c \S*examples/kvlog/seedfall\.json -seed \d+`)

// TestCIEndToEnd walks kvlog's recovery bug through a pull request's life with the real
// `seedfall ci`: introduced (new: exit 1, sticky comment created, status failure,
// outputs and summary written), merged (the push to main records it in the baseline on
// a data branch), still there (known: the same comment edited, not duplicated), fixed
// (the fixed config: fixed, status success, exit 0).
func TestCIEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kvlog and sweeps it four times with shrinking: skipped in -short")
	}
	gh := githubtest.New(t)
	gh.AddComment(ciPR, "LGTM, but let's see what seedfall says") // someone else's comment
	const (
		head1 = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
		merge = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
		head2 = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
		head3 = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
		mrgPR = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" // GITHUB_SHA of a PR run: the merge commit
	)
	defer func(start time.Time) { t.Logf("four seedfall ci runs in %s", time.Since(start).Round(time.Second)) }(time.Now())

	// 1. The PR introduces the bug.
	r1 := runCI(t, gh, "run 1 (PR, bug introduced)", "pull_request", ciPREvent(head1), mrgPR, 101, kvlogBuggy)
	r1.wantOutputs(t, exitFail, "1", "0", "0", "failure")
	if r1.outputs["new"] != "1" {
		t.Fatalf("run 1 found no new failure in kvlog seeds %s (pick a range with a failing seed): stopping", ciSeeds)
	}
	cs := gh.MarkerComments(ciPR, ci.CommentMarker)
	if len(cs) != 1 {
		t.Fatalf("run 1: %d seedfall comments, want 1", len(cs))
	}
	first := cs[0]
	for _, want := range []string{"acknowledged write lost"} {
		if !strings.Contains(first.Body, want) {
			t.Errorf("run 1: the comment lacks %q:\n%s", want, first.Body)
		}
	}
	if !replayCmd.MatchString(first.Body) {
		t.Errorf("run 1: the comment lacks a replay command (%s):\n%s", replayCmd, first.Body)
	}
	st := gh.LastCheck(t)
	if st.Conclusion != "failure" || st.HeadSHA != head1 || st.Name != "seedfall" {
		t.Errorf("run 1: check run %+v, want failure on the PR head %s", st, head1)
	}
	if len(st.Annotations) != 1 || st.Annotations[0].Path != "examples/kvlog/kvstore/kvstore.go" || st.Annotations[0].StartLine < 1 {
		t.Errorf("run 1: check run annotations %+v, want one in examples/kvlog/kvstore/kvstore.go", st.Annotations)
	}
	if !strings.Contains(r1.summary, "acknowledged write lost") || !replayCmd.MatchString(r1.summary) {
		t.Errorf("run 1: the job summary lacks the failure or its replay command:\n%s", r1.summary)
	}
	if plain := strings.ReplaceAll(r1.summary, "\\", ""); !strings.Contains(plain, "crash-state search of seed 1: 192 states, 1 distinct failure") ||
		!strings.Contains(plain, "found by the crash-state search of seed 1: a crash in disk op #") {
		t.Errorf("run 1: the job summary lacks the crash-state search and its finding:\n%s", r1.summary)
	}
	if !kvstoreAnnotation.MatchString(r1.stdout) {
		t.Errorf("run 1: no error annotation at kvstore.go (%s):\n%s", kvstoreAnnotation, r1.stdout)
	}
	// The minimal plan's own failure, from the real shrink in worker processes, beside
	// the seed's (or one line when they are the same).
	if !regexp.MustCompile("the minimal schedule fails (at `\\d[^`]*`: `client#\\d+: acknowledged write lost|the same way)").MatchString(first.Body) {
		t.Errorf("run 1: the comment does not give the minimal plan's own failure:\n%s", first.Body)
	}
	if _, ok := gh.File(ciBranch, ci.DefaultBaselinePath); ok {
		t.Fatal("run 1: a pull request wrote the baseline")
	}

	// 2. The PR merges: the push to main records the signature in the baseline.
	r2 := runCI(t, gh, "run 2 (push to main)", "push", ciPushEvent(merge), merge, 102, kvlogBuggy)
	r2.wantOutputs(t, exitFail, "1", "0", "0", "failure")
	raw, ok := gh.File(ciBranch, ci.DefaultBaselinePath)
	if !ok {
		t.Fatalf("run 2: the push to main wrote no baseline\nstdout:\n%s", r2.stdout)
	}
	base, err := ci.ParseBaseline("fake", raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Signatures) != 1 {
		t.Fatalf("run 2: baseline holds %d signatures, want 1:\n%s", len(base.Signatures), raw)
	}
	for sig, e := range base.Signatures {
		if e.Status != ci.StatusFailing || e.FirstSeen != merge || len(e.Seeds) == 0 {
			t.Errorf("run 2: baseline entry %s = %+v, want failing, first seen %s, with seeds", sig, e, merge)
		}
		// The crash-state search of seed 1 (on by default, issue 47) finds the same torn
		// tail: one bug, one signature, with the sweep's seeds and the search's seed.
		if !slices.Equal(e.SearchSeeds, []uint64{1}) || e.Placement != engine.PlacementSpread {
			t.Errorf("run 2: baseline entry %s = %+v, want the search's seed 1 and the spread placement", sig, e)
		}
		if !strings.Contains(first.Body, sig) {
			t.Errorf("run 2: baseline signature %s is not the one run 1 commented on:\n%s", sig, first.Body)
		}
	}
	if st := gh.LastCheck(t); st.HeadSHA != merge || st.Conclusion != "failure" {
		t.Errorf("run 2: check run %+v, want failure on %s", st, merge)
	}

	// 3. A later push to the PR, the bug still there: known, the comment edited.
	r3 := runCI(t, gh, "run 3 (PR, still there)", "pull_request", ciPREvent(head2), mrgPR, 103, kvlogBuggy)
	r3.wantOutputs(t, exitPass, "0", "1", "0", "success")
	cs = gh.MarkerComments(ciPR, ci.CommentMarker)
	if len(cs) != 1 || cs[0].ID != first.ID {
		t.Fatalf("run 3: seedfall comments %+v, want the one comment %d edited", cs, first.ID)
	}
	if cs[0].Body == first.Body || !strings.Contains(cs[0].Body, "known") {
		t.Errorf("run 3: the comment was not updated to show the known signature:\n%s", cs[0].Body)
	}
	if !strings.Contains(cs[0].Body, "acknowledged write lost") || !replayCmd.MatchString(cs[0].Body) {
		t.Errorf("run 3: the comment lost the failure or its replay command:\n%s", cs[0].Body)
	}
	if n := len(gh.Comments(ciPR)); n != 2 {
		t.Errorf("run 3: %d comments on the PR, want 2 (someone's and seedfall's)", n)
	}
	if st := gh.LastCheck(t); st.Conclusion != "success" || st.HeadSHA != head2 {
		t.Errorf("run 3: check run %+v, want success on %s (fail-on new; the failure is known)", st, head2)
	}
	if strings.Contains(r3.stdout, "::error ") {
		t.Errorf("run 3: a known failure was annotated as new:\n%s", r3.stdout)
	}
	if r3.summary == "" {
		t.Error("run 3: empty job summary")
	}

	// 4. The fix: the same seeds pass with the fixed recovery.
	r4 := runCI(t, gh, "run 4 (PR, fixed)", "pull_request", ciPREvent(head3), mrgPR, 104, kvlogFixed)
	r4.wantOutputs(t, exitPass, "0", "0", "1", "success")
	if st := gh.LastCheck(t); st.Conclusion != "success" || st.HeadSHA != head3 || !strings.Contains(st.Title, "1 fixed") {
		t.Errorf("run 4: check run %+v, want success with 1 fixed on %s", st, head3)
	}
	cs = gh.MarkerComments(ciPR, ci.CommentMarker)
	if len(cs) != 1 || cs[0].ID != first.ID || !strings.Contains(cs[0].Body, "fixed") {
		t.Errorf("run 4: seedfall comments %+v, want the one comment %d showing the fix", cs, first.ID)
	}
	if r4.summary == "" {
		t.Error("run 4: empty job summary")
	}
	if n := len(gh.CheckRuns()); n != 4 || len(gh.Statuses()) != 0 {
		t.Errorf("%d check runs and %d commit statuses, want 4 check runs (one per run) and no status", n, len(gh.Statuses()))
	}
	if n := gh.Puts(); n != 0 {
		// The data branch was created through the git API by the push; PRs only read.
		t.Errorf("contents PUTs = %d, want 0 (pull requests only read the baseline)", n)
	}
	for _, r := range []*ciRun{r1, r2, r3, r4} {
		t.Logf("%s: exit %d in %s; outputs %v", r.name, r.code, r.elapsed.Round(time.Millisecond), r.outputs)
	}
}
