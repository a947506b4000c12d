package engine

import (
	"reflect"
	"runtime"
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
		got, err := ParseSeeds(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSeeds(%q): err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestParseSeedsRefusesBeforeAllocating: a spec whose ranges add up to too many seeds is
// refused without allocating memory per seed.
func TestParseSeedsRefusesBeforeAllocating(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ParseSeeds("1-9999999,20000000-29999999,40000000-49999999")
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
		seeds, err := ParseSeeds(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatSeedSpec(seeds); got != spec {
			t.Errorf("FormatSeedSpec(ParseSeeds(%q)) = %q", spec, got)
		}
	}
}
