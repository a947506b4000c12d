package seedspec

import (
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint64
		err  string
	}{
		{in: "1-5", want: []uint64{1, 2, 3, 4, 5}},
		{in: "7-9,1-3,2-8", want: []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{in: "5,4,5,3-4", want: []uint64{3, 4, 5}},
		{in: "18446744073709551615", want: []uint64{18446744073709551615}},
		{in: "18446744073709551614-18446744073709551615", want: []uint64{18446744073709551614, 18446744073709551615}},
		{in: "0-18446744073709551615", err: "more than 10000000 seeds"},
		{in: "1-10000000000", err: "more than 10000000 seeds"},
		{in: "1-6000000,10000001-16000000", err: "more than 10000000 seeds"},
		{in: "9-1", err: "runs backwards"},
		{in: "x", err: `"x" is not a seed`},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q): err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestParseSeedsRefusesBeforeAllocating: a spec whose ranges add up to too many seeds is
// refused without allocating memory per seed.
func TestParseSeedsRefusesBeforeAllocating(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse("1-9999999,20000000-29999999,40000000-49999999")
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("an oversized spec was accepted")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing the spec allocated %d bytes", grew)
	}
}

func TestFormatSeedSpec(t *testing.T) {
	for _, spec := range []string{"1-100", "7", "1-3,5,7-9,100", "0,18446744073709551615"} {
		seeds, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := Format(seeds); got != spec {
			t.Errorf("Format(Parse(%q)) = %q", spec, got)
		}
	}
}

func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{"1-1000", "7", "1-5,9,20-22", "9-1", "1-10000000000", "0-18446744073709551615", "5,,6", " 3 - 4 ", "18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		seeds, err := Parse(spec)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "seeds: ") {
				t.Fatalf("error %q does not name the seeds", err)
			}
			return
		}
		if len(seeds) == 0 || len(seeds) > 10_000_000 {
			t.Fatalf("%d seeds", len(seeds))
		}
		if !slices.IsSorted(seeds) || len(slices.Compact(slices.Clone(seeds))) != len(seeds) {
			t.Fatalf("seeds not ascending and unique: %v", seeds[:min(len(seeds), 20)])
		}
		again, err := Parse(Format(seeds))
		if err != nil || !slices.Equal(again, seeds) {
			t.Fatalf("Format does not round-trip: %v", err)
		}
	})
}
