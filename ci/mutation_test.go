package ci

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/internal/githubtest"
)

// Mutate is the fake's mutation run: mutation (a copy) or mutateErr.
func (e *fakeEngine) Mutate(ctx context.Context, path string, seeds []uint64) (*Mutation, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mutated = append(e.mutated, len(seeds))
	if e.mutateErr != nil {
		return nil, e.mutateErr
	}
	if e.mutation == nil {
		return nil, errors.New("fake: no mutation result set")
	}
	m := *e.mutation
	m.Mutants = append([]Mutant(nil), e.mutation.Mutants...)
	return &m, nil
}

func mutationResult(fsyncKilled bool) *Mutation {
	m := &Mutation{Mutants: []Mutant{
		{Name: "fsync-noop", Killed: fsyncKilled, Seed: 3, Outcome: map[bool]string{true: "killed", false: "survived"}[fsyncKilled]},
		{Name: "dir-fsync-noop", Outcome: "n/a", Reason: "directory fsync has no effect without strict_dirs"},
		{Name: "fsync-noop@store/log.go:88", Site: "store/log.go:88", Killed: true, Seed: 1, Outcome: "killed"},
	}}
	m.Score = "2/2"
	if !fsyncKilled {
		m.Score = "1/2"
	}
	return m
}

// TestMutationInCI: with the mutation input the action runs mutation testing, keeps its
// result in the baseline and shows the score; a later run in which a mutant the baseline
// had killed survives flags it (the checks went blind) and fails like a new failure,
// in the PR comment, the summary and the report. "deep" runs it only on scheduled and
// manual runs, and a failing sweep skips it.
func TestMutationInCI(t *testing.T) {
	gh := githubtest.New(t)
	in := testInputs(t, "branch:seedfall-baseline")
	in.Mutation, in.MutationSeeds = mutationDeep, "1-20"

	// A push with "deep": no mutation testing.
	eng := &fakeEngine{mutation: mutationResult(true)}
	r := runGH(t, gh, "push", pushEvent("refs/heads/main", "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1"), 201, in, eng)
	if r.code != ExitPass || len(eng.mutated) != 0 {
		t.Fatalf("push with mutation=deep: exit %d, %d mutation runs\n%s", r.code, len(eng.mutated), r.stdout.String())
	}

	// The weekly schedule: mutation testing runs (20 seeds per mutant) and lands in the
	// baseline.
	r = runGH(t, gh, "schedule", map[string]any{"repository": map[string]any{"full_name": "acme/store", "default_branch": "main"}}, 202, in, eng)
	if r.code != ExitPass || !slices.Equal(eng.mutated, []int{20}) {
		t.Fatalf("schedule: exit %d, mutation runs %v\n%s", r.code, eng.mutated, r.stdout.String())
	}
	if !strings.Contains(r.summary, "mutation score `2/2`") {
		t.Errorf("summary lacks the score:\n%s", r.summary)
	}
	data, ok := gh.File("seedfall-baseline", DefaultBaselinePath)
	if !ok {
		t.Fatal("no baseline written")
	}
	b, err := ParseBaseline("baseline", data)
	must(t, err)
	if b.Mutation == nil || b.Mutation.Score != "2/2" || b.Mutation.Run != 202 || len(b.Mutation.Mutants) != 3 {
		t.Fatalf("baseline mutation %+v", b.Mutation)
	}

	// A pull request whose change makes fsync-noop survive: flagged as blind, exit 1.
	in.Mutation = mutationAlways
	blind := &fakeEngine{mutation: mutationResult(false)}
	r = runGH(t, gh, "pull_request", prEvent(7, "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1", "acme/store"), 203, in, blind)
	if r.code != ExitFailure {
		t.Errorf("blind mutant: exit %d, want %d\n%s", r.code, ExitFailure, r.stdout.String())
	}
	wantOutputs(t, "blind", r.outputs, "0", "0", "0", "failure")
	cs := gh.MarkerComments(7, CommentMarker)
	if len(cs) != 1 {
		t.Fatalf("%d comments", len(cs))
	}
	for _, where := range []struct{ name, text string }{{"comment", cs[0].Body}, {"summary", r.summary}} {
		for _, want := range []string{"mutation score `1/2` (was `2/2`)", "the checks went blind", "**went blind** (killed before, survives now): `fsync-noop`"} {
			if !strings.Contains(where.text, want) {
				t.Errorf("%s lacks %q:\n%s", where.name, want, where.text)
			}
		}
	}
	html, err := os.ReadFile(filepath.Join(r.dir, "out", ReportHTML))
	must(t, err)
	if !strings.Contains(string(html), "went blind: killed before, survives now") || !strings.Contains(string(html), "(was 2/2)") {
		t.Errorf("report.html does not flag the blind mutant")
	}

	// A failing sweep: mutation testing is skipped with a notice.
	failing := &fakeEngine{bug: true, mutation: mutationResult(true)}
	r = runGH(t, gh, "pull_request", prEvent(7, "d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1", "acme/store"), 204, in, failing)
	if len(failing.mutated) != 0 || !strings.Contains(r.stdout.String(), "skipped mutation testing") {
		t.Errorf("failing sweep: %d mutation runs\n%s", len(failing.mutated), r.stdout.String())
	}
}
