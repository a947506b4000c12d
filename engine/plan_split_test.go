package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Generated splits: every node in exactly one group, groups smallest first, and for
// three or more nodes one strict majority; over many seeds a five-node cluster sees 1|4,
// 2|3 and three-way splits. The negative control is the same config without
// split_per_sec: no split is drawn, and the rest of the plan is the one drawn before
// splits existed (the split stream is drawn last).
func TestGeneratedSplits(t *testing.T) {
	var nodes []*node
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		nodes = append(nodes, &node{name: n})
	}
	nodes = append(nodes, &node{name: "client", workload: true})
	mk := func(split float64) *Config {
		max := 64
		return &Config{Horizon: Duration(60e9), Faults: FaultConfig{PartitionPerSec: 0.5, CrashPerSec: 0.2,
			SplitPerSec: split, PartitionDuration: Duration(1e9), RestartDelay: Duration(250e6), MaxFaults: &max,
			CrashMidOp: &DiskFault{P: 0.5}}}
	}
	shapes := map[string]int{}
	for seed := uint64(1); seed <= 40; seed++ {
		with := generatePlan(mk(0.5), seed, 0, nodes)
		without := generatePlan(mk(0), seed, 0, nodes)
		var rest []Fault
		for _, f := range with.Faults {
			if f.Kind != FaultSplit {
				rest = append(rest, f)
				continue
			}
			if err := f.Validate(); err != nil {
				t.Fatalf("seed %d: %s: %v", seed, f, err)
			}
			var all, sizes []string
			major := false
			for i, g := range f.Groups {
				all = append(all, g...)
				if i > 0 && len(g) < len(f.Groups[i-1]) {
					t.Fatalf("seed %d: groups not smallest first: %s", seed, f)
				}
				major = major || 2*len(g) > len(nodes)
				sizes = append(sizes, fmt.Sprint(len(g)))
			}
			sort.Strings(all)
			if want := []string{"client", "n1", "n2", "n3", "n4", "n5"}; !slices.Equal(all, want) {
				t.Fatalf("seed %d: %s covers %v, want every node once", seed, f, all)
			}
			if !major {
				t.Fatalf("seed %d: %s has no majority group", seed, f)
			}
			shapes[strings.Join(sizes, "|")]++
		}
		for _, f := range without.Faults {
			if f.Kind == FaultSplit {
				t.Fatalf("seed %d: a split without split_per_sec: %s", seed, f)
			}
		}
		// The split poisson is drawn last: the other faults are the same, up to the cap.
		n := min(len(rest), len(without.Faults))
		if !slices.EqualFunc(rest[:n], without.Faults[:n], func(a, b Fault) bool { return a.String() == b.String() }) {
			t.Fatalf("seed %d: split_per_sec changed the other faults", seed)
		}
	}
	for _, want := range []string{"1|5", "2|4", "1|1|4"} {
		if shapes[want] == 0 {
			t.Errorf("no %s split in 40 seeds (shapes %v)", want, shapes)
		}
	}
	t.Logf("split shapes over 40 seeds: %v", shapes)
}

// Bad splits in a plan file are refused with a message that says what is wrong.
func TestSplitValidate(t *testing.T) {
	for _, tc := range []struct {
		f    Fault
		want string
	}{
		{Fault{Kind: FaultSplit, Node: "a", Groups: [][]string{{"a", "b"}}}, "at least two groups"},
		{Fault{Kind: FaultSplit, Node: "a", Groups: [][]string{{"a"}, {}}}, "groups[1] is empty"},
		{Fault{Kind: FaultSplit, Node: "a", Groups: [][]string{{"a"}, {"b", "a"}}}, `node "a" is in two groups`},
		{Fault{Kind: FaultSplit, Node: "b", Groups: [][]string{{"a"}, {"b"}}}, `node "b" is not in groups[0]`},
		{Fault{Kind: FaultPartition, Node: "a", Peers: []string{"b"}, Groups: [][]string{{"a"}, {"b"}}}, "groups are for a split"},
		{Fault{Kind: FaultSplit, Node: "a", Groups: [][]string{{"a"}, {"b"}}}, ""},
	} {
		err := tc.f.Validate()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.f, err, tc.want)
		}
	}
}

// Shrinking a three-way split proposes a two-way one (still valid) and a shorter one.
func TestSplitSimplifications(t *testing.T) {
	f := Fault{AtNS: 1e9, Kind: FaultSplit, Node: "a", Groups: [][]string{{"a"}, {"b"}, {"c", "d", "e"}}, DurationNS: 8e8}
	got := simplifications(f)
	if len(got) != 2 {
		t.Fatalf("simplifications %v, want two", got)
	}
	if g := got[0].groupsText(); g != "a | b,c,d,e" || got[0].Validate() != nil {
		t.Fatalf("merged groups %q (%v), want \"a | b,c,d,e\"", g, got[0].Validate())
	}
	if got[1].DurationNS != 4e8 || len(got[1].Groups) != 3 {
		t.Fatalf("shorter split %v", got[1])
	}
	if len(f.Groups[1]) != 1 {
		t.Fatal("simplifying changed the original fault's groups")
	}
	if two := simplifications(got[0]); len(two) != 1 || len(two[0].Groups) != 2 {
		t.Fatalf("a two-way split only shortens: %v", two)
	}
}
