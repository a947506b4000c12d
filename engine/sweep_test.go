package engine

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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

// TestPoolNeverDropsSeeds: workers that fail to start, or exit without answering (as a
// worker does after another seed's watchdog), never lose a seed: the seed is retried once
// on a fresh worker, and a seed no worker could run is a counted error, never missing.
func TestPoolNeverDropsSeeds(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"workload": {"pkg": "./client"}, "watchdog": "5s"}`))
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in worker that answers one seed and exits, so the pool's idle worker is
	// dead when the next seed reaches it.
	once := `read l; s=$(printf %s "$l" | tr -cd 0-9); echo "{\"seed\":$s,\"verdict\":\"pass\",\"faults\":[],\"trace_hash\":\"h$s\"}"`
	var mu sync.Mutex
	starts := 0
	res, err := SweepIsolated(context.Background(), cfg, []uint64{1, 2, 3, 4, 5, 6}, IsolatedOptions{
		Workers: 2, Grace: time.Second,
		Command: func() *exec.Cmd {
			mu.Lock()
			defer mu.Unlock()
			starts++
			if starts%3 == 0 { // every third start fails
				return exec.Command(filepath.Join(t.TempDir(), "no-such-worker"))
			}
			return exec.Command("sh", "-c", once)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		got = append(got, fmt.Sprintf("%d:%s", r.Seed, r.Verdict))
	}
	if want := []string{"1:pass", "2:pass", "3:pass", "4:pass", "5:pass", "6:pass"}; !slices.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}

	// No worker can start at all: every seed is a counted error... and with nothing else
	// to report, Sweep returns the error.
	res, err = SweepIsolated(context.Background(), cfg, []uint64{1, 2, 3}, IsolatedOptions{
		Workers: 2,
		Command: func() *exec.Cmd { return exec.Command(filepath.Join(t.TempDir(), "no-such-worker")) },
	})
	if err == nil || !strings.Contains(err.Error(), "could not start a worker process") {
		t.Errorf("no worker could start: err %v, results %d", err, len(res))
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
