// Package seedspec reads and writes seed lists ("1-1000", "1-5,9,20-22") and splits them
// into shards, for the commands, the Action and the MCP server.
package seedspec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Parse parses a seed list: "1-1000", "7", "1-5,9,20-22". Seeds are returned in
// ascending order without duplicates.
func Parse(spec string) ([]uint64, error) {
	const most = 10_000_000
	// Parse every part into a range first and count the seeds they cover, so that an
	// oversized spec ("1-10000000000", or many large ranges) is refused before anything
	// is allocated per seed.
	type span struct{ lo, hi uint64 }
	var spans []span
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seeds: %q is not a seed or a range such as 1-500", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(hi), 10, 64); err != nil {
				return nil, fmt.Errorf("seeds: %q is not a seed or a range such as 1-500", part)
			}
			if b < a {
				return nil, fmt.Errorf("seeds: range %q runs backwards", part)
			}
		}
		if b-a >= most {
			return nil, fmt.Errorf("seeds: %q asks for more than %d seeds", spec, most)
		}
		spans = append(spans, span{a, b})
		if len(spans) > most {
			return nil, fmt.Errorf("seeds: %q asks for more than %d seeds", spec, most)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.lo <= last.hi || sp.lo == last.hi+1 {
			last.hi = max(last.hi, sp.hi)
			continue
		}
		merged = append(merged, sp)
	}
	total := uint64(0)
	for _, sp := range merged {
		total += sp.hi - sp.lo + 1
		if total > most {
			return nil, fmt.Errorf("seeds: %q asks for more than %d seeds", spec, most)
		}
	}
	out := make([]uint64, 0, total)
	for _, sp := range merged {
		for x := sp.lo; ; x++ {
			out = append(out, x)
			if x == sp.hi {
				break
			}
		}
	}
	return out, nil
}

// Format writes seeds (ascending, no duplicates) as the shortest spec that
// Parse reads back: runs of consecutive seeds as ranges, "1-100,105,200-210".
func Format(seeds []uint64) string {
	var b strings.Builder
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(seeds[i], 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(seeds[j], 10))
		}
		i = j + 1
	}
	return b.String()
}

// Shard returns shard i of n (1-based) of seeds: every n-th seed starting at index i-1.
// The shards of 1/n … n/n partition the seeds.
func Shard(seeds []uint64, i, n int) []uint64 {
	var out []uint64
	for k, s := range seeds {
		if k%n == i-1 {
			out = append(out, s)
		}
	}
	return out
}

// ParseShard parses "i/n".
func ParseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("shard %q: want i/n with 1 <= i <= n, e.g. 2/4", s)
	}
	return i, n, nil
}
