package platform

import (
	"strconv"
	"strings"
)

// inRange reports whether version v satisfies min <= v < below. A version that is not
// semantic ("", a local directory) is in no range.
func inRange(v, min, below string) bool {
	return valid(v) && compare(min, v) <= 0 && compare(v, below) < 0
}

func valid(v string) bool {
	_, _, ok := parse(v)
	return ok
}

// parse splits "v1.2.3-pre+build" into its three numbers and its pre-release.
func parse(v string) (nums [3]int, pre string, ok bool) {
	rest, ok := strings.CutPrefix(v, "v")
	if !ok {
		return nums, "", false
	}
	rest, _, _ = strings.Cut(rest, "+")
	rest, pre, _ = strings.Cut(rest, "-")
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return nums, "", false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nums, "", false
		}
		nums[i] = n
	}
	return nums, pre, true
}

// compare orders semantic versions as semver.org does: numbers, then a pre-release
// (a pseudo-version's "0.20220721030215-126854af5e6d") before the release itself.
func compare(a, b string) int {
	na, pa, _ := parse(a)
	nb, pb, _ := parse(b)
	for i := range 3 {
		if na[i] != nb[i] {
			if na[i] < nb[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case pa == pb:
		return 0
	case pa == "":
		return 1
	case pb == "":
		return -1
	}
	ia, ib := strings.Split(pa, "."), strings.Split(pb, ".")
	for i := 0; i < len(ia) && i < len(ib); i++ {
		if c := compareIdent(ia[i], ib[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(ia) < len(ib):
		return -1
	case len(ia) > len(ib):
		return 1
	}
	return 0
}

func compareIdent(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		if x < y {
			return -1
		} else if x > y {
			return 1
		}
		return 0
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}
