// Package explore is seedfall's feedback-directed exploration: instead of sweeping seeds
// in order, it keeps a corpus of runs (a seed and the fault plan it applied) that reached
// something no earlier run reached, and derives new runs by editing their plans — a crash
// moved to a neighbouring disk op, a fault added, dropped or shifted, a partition widened
// or moved, the future after a prefix of the plan drawn anew. Every run it makes is a
// seed plus a plan, so every run replays exactly with `seedfall replay -faults`.
//
// What a run "reached" is its feature set (Features): the property hits, the failure
// signature, and what the trace shows of the system's I/O paths — the disk-op call sites
// and op kinds, the disk ops a crash interrupted, what each crash left on disk, the
// nodes' exit reasons and what they print (recovery lines) after a restart — plus the
// coverage units of Result.Coverage when the run collected coverage.
//
// It drives the engine only through its public API (Sim.Run with a plan, the Result)
// and internal/engineapi (GeneratePlan, RenumberFaults); it never reaches into a run, and
// its own randomness is one stream seeded by -seed, so an exploration is reproducible.
package explore

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// DiskOp is one numbered disk op of a run, as its trace line gives it: a crash pinned
// to it (node, incarnation, op number) replays it exactly.
type DiskOp struct {
	AtNS        int64
	Node        string // node name ("server")
	Incarnation int    // 1-based
	N           int64  // op number within the incarnation
	Class       string // "write /data/kv.log kvlog/kvstore/kvstore.go:179"
}

// Analysis is what the explorer keeps of one run.
type Analysis struct {
	Features []string // sorted, distinct
	Ops      []DiskOp // in trace order, at most maxOps
}

// maxOps bounds the disk ops kept per run (the crash-at-op operator picks among them).
const maxOps = 50_000

// maxLine bounds the length of a feature made from a line a guest printed.
const maxLine = 120

var (
	traceLine = regexp.MustCompile(`^\s*(\S+) (\S+) (.*)$`)
	diskLine  = regexp.MustCompile(`^disk #(\d+) (\S+) (\S+)(.*?)(?: at (\S+:\d+))?(: [A-Z]+.*)?$`)
	crashOp   = regexp.MustCompile(`^crash (\S+) during disk op #\d+ (\S+) (\S+).*? at (\S+:\d+)(?: \((.*)\))?$`)
	crashIdle = regexp.MustCompile(`^crash (\S+) \(idle\)$`)
	afterCr   = regexp.MustCompile(`^(\S+) disk after crash: (.*)$`)
	kvCount   = regexp.MustCompile(`(\w+) (\w+)=(\d+)|(\w+)=(\d+)`)
	digits    = regexp.MustCompile(`\d+`)
	netSite   = regexp.MustCompile(`^(listen|dial) .*? at (\S+:\d+)$`)
)

// Analyze derives a run's features from its result and its trace (r.Trace; a run
// without one has only the result's features).
func Analyze(r *engine.Result) Analysis {
	fs := map[string]int{}
	add := func(f string) { fs[f]++ }
	for _, p := range r.Properties {
		switch {
		case !p.Reached:
			add("prop " + p.Name + " unreached")
		case p.Held:
			add("prop " + p.Name + " held")
		default:
			add("prop " + p.Name + " violated")
		}
	}
	if r.Failure != nil {
		sig := r.Failure.Signature
		if sig == "" {
			sig = engine.Signature(r)
		}
		add("fail " + sig)
	}
	for _, u := range coverageUnits(r) {
		add("cov " + u)
	}
	var ops []DiskOp
	// Per node: the last crash, so that what the next incarnation prints first is
	// paired with the crash that preceded it (recovery after a torn write is not
	// recovery after an idle crash).
	lastCrash := map[string]string{}
	printed := map[string]int{} // node -> lines printed by its current incarnation
	for _, line := range r.Trace {
		m := traceLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, who, what := parseDuration(m[1]), m[2], m[3]
		switch who {
		case "fault":
			if c := crashOp.FindStringSubmatch(what); c != nil {
				name := nodeOf(c[1])
				class := c[2] + " " + pathClass(c[3]) + " " + c[4]
				torn := ""
				if c[5] != "" {
					torn = " (" + digits.ReplaceAllString(c[5], "N") + ")"
				}
				// A write's crash feature carries its outcome, how much of it landed; no
				// other op has one. So "crash during <class>", which crash-at-op asks
				// about, is seen once for a rename or an fsync but never for a write:
				// each crash in a write draws anew where it tears, and crash-at-op keeps
				// preferring writes as it prefers classes no crash has interrupted.
				add("crash during " + class + torn)
				lastCrash[name] = "mid-op " + c[2] + torn
			} else if c := crashIdle.FindStringSubmatch(what); c != nil {
				add("crash idle " + nodeOf(c[1]))
				lastCrash[nodeOf(c[1])] = "idle"
			} else if c := afterCr.FindStringSubmatch(what); c != nil {
				// "writes kept=1 dropped=0 torn=0 (bytes kept=0 lost=0) ...": which kinds
				// of loss the crash caused.
				for _, kv := range kvCount.FindAllStringSubmatch(c[2], -1) {
					key, n := kv[1]+" "+kv[2], kv[3]
					if kv[4] != "" {
						key, n = kv[4], kv[5]
					}
					if n != "0" {
						add("after crash " + key + ">0")
					}
				}
			} else {
				kind, _, _ := strings.Cut(what, " ")
				add("fault " + kind)
			}
		case "net":
			add("net " + engine.NormalizeReason(what))
		case "world":
			if strings.HasPrefix(what, "FAIL ") || strings.HasPrefix(what, "future re-randomized") {
				continue
			}
			add("world " + engine.NormalizeReason(what))
		default:
			name, inc := splitLabel(who)
			if inc == 0 {
				continue
			}
			switch {
			case strings.HasPrefix(what, "disk #"):
				d := diskLine.FindStringSubmatch(what)
				if d == nil {
					continue
				}
				n, _ := strconv.ParseInt(d[1], 10, 64)
				class := d[2] + " " + pathClass(d[3]) + " " + d[5]
				add("disk " + class)
				if d[6] != "" {
					errName, _, _ := strings.Cut(strings.TrimPrefix(d[6], ": "), " ")
					add("disk error " + class + " " + errName)
				}
				if len(ops) < maxOps {
					ops = append(ops, DiskOp{AtNS: at, Node: name, Incarnation: inc, N: n, Class: class})
				}
			case strings.HasPrefix(what, "| "):
				text := clip(engine.NormalizeReason(what[2:]))
				add("out " + name + " | " + text)
				printed[name]++
				if c, ok := lastCrash[name]; ok && printed[name] <= 3 {
					add("after " + c + " crash, " + name + " | " + text)
				}
			case what == "start":
				printed[name] = 0
				add(fmt.Sprintf("lives %s %s", name, bucket(inc)))
			case strings.HasPrefix(what, "exited with code"):
				add("exit " + name + " " + clip(engine.NormalizeReason(what)))
			case strings.Contains(what, " violated: "):
				add("violated " + name + " " + clip(engine.NormalizeReason(what)))
			default:
				if s := netSite.FindStringSubmatch(what); s != nil {
					add(s[1] + " " + s[2])
				} else if strings.HasPrefix(what, "accept ") {
					add("accept " + name)
				}
			}
		}
	}
	var out []string
	for f, n := range fs {
		out = append(out, f)
		// Hit counts in buckets (1, 2, 3, 4-7, 8+) for what faults and guests did: a
		// second torn-tail recovery is new, a tenth write to the same site is not.
		if n > 1 && !strings.HasPrefix(f, "disk ") && !strings.HasPrefix(f, "cov ") {
			out = append(out, f+" ×"+bucket(n))
		}
	}
	sort.Strings(out)
	return Analysis{Features: out, Ops: ops}
}

// coverageUnits returns the code coverage units the run reached, when its config asks
// for coverage (Result.Coverage; none otherwise, and the trace-derived features are the
// coverage: of the I/O paths, which is what crash faults act on).
func coverageUnits(r *engine.Result) []string { return r.Coverage.Units() }

func bucket(n int) string {
	switch {
	case n <= 3:
		return strconv.Itoa(n)
	case n <= 7:
		return "4-7"
	default:
		return "8+"
	}
}

func clip(s string) string {
	if len(s) > maxLine {
		s = s[:maxLine]
	}
	return s
}

// pathClass strips the numbers from a path: /data/wal/00000012.seg and
// /data/wal/00000013.seg are one class.
func pathClass(p string) string { return digits.ReplaceAllString(p, "N") }

// splitLabel splits an incarnation label "server#2" into its node and incarnation.
func splitLabel(who string) (string, int) {
	name, n, ok := strings.Cut(who, "#")
	if !ok {
		return who, 0
	}
	k, err := strconv.Atoi(n)
	if err != nil {
		return who, 0
	}
	return name, k
}

func nodeOf(label string) string {
	n, _ := splitLabel(label)
	return n
}

// parseDuration reads a trace line's time ("427.268ms", "0s").
func parseDuration(s string) int64 {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0
	}
	return int64(d)
}
