package ci

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
)

func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint64
		err  string
	}{
		{in: "1-5", want: []uint64{1, 2, 3, 4, 5}},
		{in: "1-3,900, 2 ,7-7", want: []uint64{1, 2, 3, 7, 900}},
		{in: "0", want: []uint64{0}},
		{in: "", err: "input seeds: empty"},
		{in: "5-1", err: `input seeds: range "5-1" runs backwards`},
		{in: "1-x", err: `input seeds: "1-x" is not a seed`},
		{in: "1,,2", err: `input seeds: "" is not a seed`},
		{in: "1-100000000000", err: "more than 10000000 seeds"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseSeeds(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want shard
		err  bool
	}{
		{"", shard{1, 1}, false}, {"1/1", shard{1, 1}, false}, {"3/4", shard{3, 4}, false}, {" 2 / 3 ", shard{2, 3}, false},
		{"0/3", shard{}, true}, {"4/3", shard{}, true}, {"1/0", shard{}, true}, {"2", shard{}, true}, {"a/b", shard{}, true},
	} {
		got, err := parseShard(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseShard(%q) = %v, %v", tc.in, got, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "input shard: ") {
			t.Errorf("parseShard(%q): error %q does not name the input", tc.in, err)
		}
	}
	seeds := []uint64{10, 11, 12, 13, 14, 15, 16}
	if got := (shard{2, 3}).Apply(seeds); !reflect.DeepEqual(got, []uint64{11, 14}) {
		t.Errorf("shard 2/3 = %v", got)
	}
}

func TestParseInputs(t *testing.T) {
	env := map[string]string{
		"INPUT_CONFIG": "cfg/seedfall.json", "INPUT_SEEDS": "1-9", "INPUT_SHRINK-BUDGET": "30s",
		"INPUT_FAIL-ON": "any", "INPUT_COMMENT": "false", "INPUT_SHARD": "2/4", "INPUT_BASELINE": "branch:data",
		"GITHUB_TOKEN": "from-env", "INPUT_MUTATION": "deep",
	}
	getenv := func(k string) string { return env[k] }
	in, err := ParseInputs([]string{"-seeds", "5-6", "-mode", "deep", "-mutation-seeds", "1-20"}, getenv, io.Discard)
	must(t, err)
	want := Inputs{Config: "cfg/seedfall.json", Seeds: "5-6", Mode: modeDeep, ShrinkBudget: 30 * time.Second,
		Baseline: "branch:data", Token: "from-env", Comment: false, FailOn: failOnAny, Shard: shard{2, 4}, Out: DefaultOut,
		Mutation: mutationDeep, MutationSeeds: "1-20", CrashSeeds: "1", CrashBudget: 200}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got %+v\nwant %+v", in, want)
	}
	// Deep: 2 seeds become 20 (5..24), shard 2/4 takes positions 1, 5, 9, ...
	seeds, err := in.seedsToSweep()
	must(t, err)
	if wantSeeds := []uint64{6, 10, 14, 18, 22}; !reflect.DeepEqual(seeds, wantSeeds) {
		t.Errorf("seed list %v, want %v", seeds, wantSeeds)
	}

	def, err := ParseInputs(nil, nil, io.Discard)
	must(t, err)
	if def.Config != "seedfall.json" || def.Seeds != "1-500" || def.Mode != modeAuto || def.ShrinkBudget != 2*time.Minute ||
		!def.Comment || def.FailOn != failOnNew || def.Shard != (shard{1, 1}) || def.Baseline != "" {
		t.Errorf("defaults %+v", def)
	}

	for _, tc := range []struct {
		args []string
		env  map[string]string
		err  string
	}{
		{[]string{"-mode", "fast"}, nil, `input mode: "fast"`},
		{nil, map[string]string{"INPUT_FAIL-ON": "sometimes"}, `input fail-on: "sometimes"`},
		{[]string{"-shrink-budget", "soon"}, nil, `input shrink-budget: "soon"`},
		{[]string{"-comment", "maybe"}, nil, `input comment: "maybe"`},
		{[]string{"-mutation", "sometimes"}, nil, `input mutation: "sometimes" is not a choice`},
		{[]string{"-mutation-seeds", "9-1"}, nil, `input mutation-seeds: range "9-1" runs backwards`},
		{[]string{"-shard", "5/4"}, nil, `input shard: "5/4"`},
		{[]string{"-seeds", "x"}, nil, `input seeds: "x"`},
		{[]string{"-baseline", "branch:"}, nil, `input baseline: "branch:"`},
		{[]string{"extra"}, nil, `unexpected argument "extra"`},
	} {
		_, err := ParseInputs(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseInputs(%q, %v): err %v, want %q", tc.args, tc.env, err, tc.err)
		}
	}
}

func TestReadEvent(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	for _, tc := range []struct {
		name, event, body string
		want              event
		writes            bool
		err               string
	}{
		{name: "pr", event: "pull_request",
			body:   `{"number":7,"pull_request":{"number":7,"head":{"sha":"h3ad","repo":{"full_name":"fork/store"}}},"repository":{"full_name":"acme/store","default_branch":"main"}}`,
			want:   event{Name: "pull_request", Owner: "acme", Repo: "store", SHA: "h3ad", Ref: "refs/pull/7/merge", PR: 7, DefaultBranch: "main", Fork: true},
			writes: false},
		{name: "push-main", event: "push",
			body:   `{"ref":"refs/heads/main","after":"af7e","repository":{"full_name":"acme/store","default_branch":"main"}}`,
			want:   event{Name: "push", Owner: "acme", Repo: "store", SHA: "af7e", Ref: "refs/heads/main", DefaultBranch: "main"},
			writes: true},
		{name: "push-tag", event: "push",
			body:   `{"ref":"refs/tags/v1","after":"af7e","repository":{"full_name":"acme/store","default_branch":"main"}}`,
			want:   event{Name: "push", Owner: "acme", Repo: "store", SHA: "af7e", Ref: "refs/tags/v1", DefaultBranch: "main"},
			writes: false},
		{name: "schedule", event: "schedule", body: `{"schedule":"0 3 * * 1"}`,
			want: event{Name: "schedule", Owner: "acme", Repo: "store", SHA: "env5ha", Ref: "refs/pull/7/merge"}, writes: true},
		{name: "dispatch", event: "workflow_dispatch", body: `{"inputs":{}}`,
			want: event{Name: "workflow_dispatch", Owner: "acme", Repo: "store", SHA: "env5ha", Ref: "refs/pull/7/merge"}, writes: true},
		{name: "bad-json", event: "push", body: `{`, err: "invalid JSON"},
		{name: "pr-no-head", event: "pull_request", body: `{"pull_request":{"number":1,"head":{}}}`, err: "pull_request.head.sha is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{EventName: tc.event, EventPath: write(tc.name+".json", tc.body), Repository: "acme/store", SHA: "env5ha", Ref: "refs/pull/7/merge"}
			ev, err := readEvent(env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			must(t, err)
			if ev != tc.want {
				t.Errorf("got %+v\nwant %+v", ev, tc.want)
			}
			if ev.WritesBaseline() != tc.writes {
				t.Errorf("WritesBaseline = %v, want %v", ev.WritesBaseline(), tc.writes)
			}
		})
	}
}

// TestShardsMergeToUnsharded: shards 1/3, 2/3 and 3/3 of a sweep, merged, equal the
// unsharded sweep, byte for byte.
func TestShardsMergeToUnsharded(t *testing.T) {
	dir := t.TempDir()
	run := func(shard shard, out string) string {
		in := testInputs(t, "")
		in.Seeds = "1-100,250"
		in.Shard = shard
		in.Out = filepath.Join(dir, out)
		in.ShrinkBudget = 0
		var stdout bytes.Buffer
		_, err := Run(context.Background(), in, Env{}, &fakeEngine{bug: true, extra: 5}, &stdout)
		must(t, err)
		return filepath.Join(in.Out, ResultsJSONL)
	}
	whole := run(shard{1, 1}, "whole")
	var files []string
	for i := 1; i <= 3; i++ {
		files = append(files, run(shard{i, 3}, "shard"+string(rune('0'+i))))
	}
	merged, err := Merge(files)
	must(t, err)
	var buf bytes.Buffer
	must(t, WriteResults(&buf, merged))
	want, err := os.ReadFile(whole)
	must(t, err)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("merged shards differ from the unsharded sweep")
	}
	if len(merged) != 101 {
		t.Errorf("%d merged results, want 101", len(merged))
	}

	// Overlap: the same shard twice, and two different files sharing a seed.
	again := filepath.Join(dir, "again.jsonl")
	raw, err := os.ReadFile(files[0])
	must(t, err)
	must(t, os.WriteFile(again, raw, 0o644))
	if _, err := Merge([]string{files[0], files[1], again}); err == nil || !strings.Contains(err.Error(), "is in both "+files[0]+" and "+again+": the shards overlap") {
		t.Errorf("overlapping shards: err %v", err)
	}
	dup := filepath.Join(dir, "dup.jsonl")
	var b bytes.Buffer
	must(t, WriteResults(&b, []engine.Result{{Seed: 4}, {Seed: 4}}))
	must(t, os.WriteFile(dup, b.Bytes(), 0o644))
	if _, err := Merge([]string{dup}); err == nil || !strings.Contains(err.Error(), "seed 4 appears twice in "+dup) {
		t.Errorf("duplicate seed: err %v", err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	must(t, os.WriteFile(bad, []byte("{\"seed\":1}\nnot json\n"), 0o644))
	if _, err := Merge([]string{bad}); err == nil || !strings.Contains(err.Error(), bad+":2: not a seedfall result") {
		t.Errorf("bad line: err %v", err)
	}
	if _, err := Merge(nil); err == nil {
		t.Error("Merge(nil) succeeded")
	}
}

func TestMergeBaselines(t *testing.T) {
	theirs := newBaseline()
	theirs.Signatures["sig-a"] = &Entry{Reason: "a-old", Seeds: []uint64{1, 5}, FirstSeen: "t1", FirstRun: 1, LastSeen: "t3", LastRun: 3, Status: StatusFailing}
	theirs.Signatures["sig-t"] = &Entry{Reason: "t", Seeds: []uint64{2}, FirstSeen: "t2", FirstRun: 2, LastSeen: "t2", LastRun: 2, Status: StatusFailing}
	theirs.Signatures["sig-f"] = &Entry{Reason: "f", Seeds: []uint64{9}, FirstSeen: "t1", FirstRun: 1, LastSeen: "t6", LastRun: 6, Status: StatusFailing}
	mine := newBaseline()
	mine.Signatures["sig-a"] = &Entry{Reason: "a-new", Seeds: []uint64{5, 7}, FirstSeen: "m2", FirstRun: 2, LastSeen: "m4", LastRun: 4, Status: StatusFailing}
	mine.Signatures["sig-m"] = &Entry{Reason: "m", Seeds: []uint64{3}, FirstSeen: "m4", FirstRun: 4, LastSeen: "m4", LastRun: 4, Status: StatusFailing}
	// Mine says sig-f is fixed in run 4, but run 6 (theirs) saw it failing: it stays failing.
	mine.Signatures["sig-f"] = &Entry{Reason: "f", Seeds: []uint64{9}, FirstSeen: "t1", FirstRun: 1, LastSeen: "t1", LastRun: 1, Status: StatusFixed, FixedIn: "m4", FixedRun: 4}
	mine.Mutation = &Mutation{Score: "6/7", Run: 4}
	got := mergeBaselines(theirs, mine)
	a := got.Signatures["sig-a"]
	if a.FirstSeen != "t1" || a.LastSeen != "m4" || a.Reason != "a-new" || !reflect.DeepEqual(a.Seeds, []uint64{1, 5, 7}) {
		t.Errorf("sig-a merged to %+v", a)
	}
	if got.Signatures["sig-t"] == nil || got.Signatures["sig-m"] == nil {
		t.Error("a signature was lost")
	}
	if f := got.Signatures["sig-f"]; f.Status != StatusFailing || f.LastSeen != "t6" || f.FixedIn != "" {
		t.Errorf("sig-f merged to %+v, want failing (seen after the fix)", f)
	}
	if got.Mutation == nil || got.Mutation.Score != "6/7" {
		t.Errorf("mutation %+v", got.Mutation)
	}
	// Merging must not alias its inputs.
	got.Signatures["sig-a"].Seeds[0] = 99
	if theirs.Signatures["sig-a"].Seeds[0] != 1 || mine.Signatures["sig-a"].Seeds[0] != 5 {
		t.Error("mergeBaselines aliases its inputs")
	}
	// Bytes are stable: sorted keys and seeds.
	b1, err := got.marshal()
	must(t, err)
	b2, err := got.clone().marshal()
	must(t, err)
	if !bytes.Equal(b1, b2) || !bytes.Contains(b1, []byte(`"version": 1`)) {
		t.Errorf("unstable or unversioned baseline:\n%s", b1)
	}
}

func TestFileStoreCAS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "b.json")
	s := fileStore{Path: path}
	ctx := context.Background()
	b, v, err := s.Load(ctx)
	must(t, err)
	if v != "" || len(b.Signatures) != 0 {
		t.Fatalf("missing file: %v %q", b, v)
	}
	must(t, s.Save(ctx, b, v))
	if err := s.Save(ctx, b, v); err != errConflict {
		t.Errorf("stale save: err %v, want errConflict", err)
	}
	_, v2, err := s.Load(ctx)
	must(t, err)
	b.Signatures["sig-x"] = &Entry{Reason: "x", Status: StatusFailing}
	must(t, updateBaseline(ctx, s, v, b)) // stale version: merges and retries
	got, _, err := s.Load(ctx)
	must(t, err)
	if got.Signatures["sig-x"] == nil || v2 == "" {
		t.Errorf("after update: %+v", got)
	}
}

// TestFileStoreConcurrentWriters: runs on one machine that update a file baseline at
// the same moment lose nothing: every writer's signature is in the final file, no
// temporary or lock file is left behind.
func TestFileStoreConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	s := fileStore{Path: filepath.Join(dir, "b.json")}
	ctx := context.Background()
	const writers = 4 // at most 3 conflicts each: within UpdateBaseline's 5 attempts
	for round := 0; round < 5; round++ {
		var wg sync.WaitGroup
		errs := make([]error, writers)
		start := make(chan struct{})
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, v, err := s.Load(ctx)
				if err != nil {
					errs[i] = err
					return
				}
				<-start // every writer has read the same version
				mine := b.clone()
				mine.Signatures[fmt.Sprintf("sig-%d-%d", round, i)] = &Entry{Reason: "lost write", Status: StatusFailing}
				errs[i] = updateBaseline(ctx, s, v, mine)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d writer %d: %v", round, i, err)
			}
		}
	}
	got, _, err := s.Load(ctx)
	must(t, err)
	for round := 0; round < 5; round++ {
		for i := 0; i < writers; i++ {
			if got.Signatures[fmt.Sprintf("sig-%d-%d", round, i)] == nil {
				t.Errorf("writer %d of round %d was lost", i, round)
			}
		}
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("files left: %v, want only b.json", names)
	}
}
