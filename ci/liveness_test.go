package ci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/internal/githubtest"
)

// TestLivenessTriage: liveness failures (seeds whose workload never finished) are
// triaged like any failure, one new signature for the stall on every seed with its
// replay command, and counted apart in the job summary and the reports.
func TestLivenessTriage(t *testing.T) {
	gh := githubtest.New(t)
	in := testInputs(t, "branch:seedfall-baseline")
	r := runGH(t, gh, "pull_request", prEvent(7, "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", "acme/store"), 101, in, &fakeEngine{liveness: true})
	if r.code != ExitFailure {
		t.Fatalf("exit %d, want %d\n%s", r.code, ExitFailure, r.stdout.String())
	}
	wantOutputs(t, "liveness", r.outputs, "1", "0", "0", "failure")
	want := "| seeds | passed | failed | never finished | time horizon | watchdog | errors |"
	if !strings.Contains(r.summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, r.summary)
	}
	// Seeds 1-50: 4, 8, …, 48 never finish.
	if row := "| 50 | 38 | 12 | 12 | 0 | 0 | 0 |"; !strings.Contains(r.summary, row) {
		t.Errorf("summary lacks the counts %q:\n%s", row, r.summary)
	}
	if !strings.Contains(r.summary, "`liveness`") || !strings.Contains(r.summary, "seedfall replay -c seedfall.json -seed 4") {
		t.Errorf("summary does not show the liveness group with its replay command:\n%s", r.summary)
	}
	junit, err := os.ReadFile(filepath.Join(r.dir, "out", JUnitXML))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(junit), "12 failed (12 never finished)") || !strings.Contains(string(junit), `type="liveness"`) {
		t.Errorf("JUnit report does not count or type the liveness failures:\n%s", junit)
	}
}
