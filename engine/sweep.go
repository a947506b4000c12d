package engine

import (
	"sort"
)

// PropertySummary aggregates one property across a sweep.
type PropertySummary struct {
	Name         string       `json:"name"`
	Kind         PropertyKind `json:"kind"`
	SeedsReached int          `json:"seeds_reached"`
	SeedsTrue    int          `json:"seeds_true"`
	// OK is the sweep verdict: always/unreachable never violated, sometimes true on at
	// least one seed, reachable reached on at least one seed.
	OK bool `json:"ok"`
}

// AggregateProperties counts, per property, the seeds where it was reached and where it
// held, sorted by name.
func AggregateProperties(results []*Result) []PropertySummary {
	m := map[string]*PropertySummary{}
	for _, r := range results {
		for _, p := range r.Properties {
			ps := m[p.Name]
			if ps == nil {
				ps = &PropertySummary{Name: p.Name, Kind: p.Kind}
				m[p.Name] = ps
			}
			if p.Reached {
				ps.SeedsReached++
			}
			if p.Reached && p.Held {
				ps.SeedsTrue++
			}
		}
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]PropertySummary, 0, len(names))
	for _, k := range names {
		ps := m[k]
		switch ps.Kind {
		case PropAlways:
			ps.OK = ps.SeedsTrue == ps.SeedsReached
		case PropUnreachable:
			ps.OK = ps.SeedsReached == 0
		case PropSometimes:
			ps.OK = ps.SeedsTrue > 0
		case PropReachable:
			ps.OK = ps.SeedsReached > 0
		}
		out = append(out, *ps)
	}
	return out
}
