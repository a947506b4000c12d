package disk

import (
	"fmt"
	"maps"
	"slices"
)

// Chooser makes a crash's choices; *rand.Rand is one. A Chooser that is also a
// Decider is told what each choice decides (systematic crash states, explicit
// states in a plan); any other draws r.IntN(d.N), so a random crash is exactly
// what it was before Deciders existed.
type Chooser interface{ IntN(n int) int }

// Decider is a Chooser that makes each choice knowing what it decides.
type Decider interface {
	Chooser
	// Decide returns a value in [0, d.N).
	Decide(d Decision) int
}

// DecisionKind says what a crash's choice decides.
type DecisionKind uint8

// The choices of a crash, in the order they are made (see Crash).
const (
	// InflightCut: how much of the write in flight lands, 0 (nothing) or the
	// i-th tear point.
	InflightCut DecisionKind = iota + 1
	// InflightApply: whether the namespace op or fsync in flight lands: 0 yes, 1 no.
	InflightApply
	// NsPrefix: how many of a directory's pending namespace ops (Seqs, in
	// order) persist, 0..len(Seqs).
	NsPrefix
	// Truncate: whether a pending truncate (Seq) persists: 0 yes, 1 no.
	Truncate
	// Write: whether a pending write (Seq) persists (0), is lost (1) or is
	// torn (2); N is 3 only when it may tear.
	Write
	// TearCut: where the torn write (Seq) ends, the i-th of N tear points.
	TearCut
)

// Decision is one choice a crash makes.
type Decision struct {
	Kind DecisionKind
	N    int
	Seq  uint64   // the pending op it decides (Truncate, Write, TearCut)
	Seqs []uint64 // the directory's pending ops (NsPrefix)
}

// Pick makes the choice d with r.
func Pick(r Chooser, d Decision) int {
	if x, ok := r.(Decider); ok {
		v := x.Decide(d)
		if v < 0 || v >= d.N {
			panic(fmt.Sprintf("disk: decider chose %d of %d", v, d.N))
		}
		return v
	}
	return r.IntN(d.N)
}

// CrashReport says what a Crash kept and lost. It depends only on the FS
// state and the random stream, so it can go into the trace.
type CrashReport struct {
	WritesKept, WritesDropped, WritesTorn int
	// TornBytesKept and TornBytesLost sum the kept prefixes and lost
	// suffixes of torn writes.
	TornBytesKept, TornBytesLost    int64
	TruncatesKept, TruncatesDropped int
	// NamespaceOpsKept and NamespaceOpsLost count pending namespace
	// operations (StrictDirs, RenameNonAtomic) that survived or were lost.
	NamespaceOpsKept, NamespaceOpsLost int
	// DirLinksRepaired counts durable entries removed because they named a
	// directory that was already reachable under another name (possible
	// with StrictDirs when renames in two directories persist unevenly), as
	// fsck would.
	DirLinksRepaired int
	// InodesDiscarded counts inodes not reachable from the durable root.
	InodesDiscarded int
	// Lines has one line per inode that had pending operations, by Ino.
	Lines []string
}

// String summarises the report on one line.
func (r CrashReport) String() string {
	return fmt.Sprintf("writes kept=%d dropped=%d torn=%d (bytes kept=%d lost=%d) truncates kept=%d dropped=%d ns kept=%d lost=%d repaired=%d discarded=%d",
		r.WritesKept, r.WritesDropped, r.WritesTorn, r.TornBytesKept, r.TornBytesLost,
		r.TruncatesKept, r.TruncatesDropped, r.NamespaceOpsKept, r.NamespaceOpsLost,
		r.DirLinksRepaired, r.InodesDiscarded)
}

// Crash simulates a power loss of the node and rebuilds the disk it restarts
// with. All draws come from r, in a fixed order, so the same stream gives the
// same disk:
//
//  1. For each directory by Ino, its pending namespace operations persist as
//     a prefix of k of n, k drawn uniformly from 0..n (StrictDirs). Without
//     StrictDirs pending operations exist only under RenameNonAtomic and are
//     all lost, with no draw. A prefix that holds one half of a
//     cross-directory rename whose other half did not survive is then cut
//     before it (repeatedly, until no rename survives by halves), so a
//     renamed entry is in exactly one of its two directories.
//  2. Inodes not reachable from the root through durable entries are
//     discarded.
//  3. For each surviving file by Ino, content = durable content, then each
//     pending operation in order is applied or dropped, or, if torn and the
//     write crosses a multiple of Options.TearUnit, applied as a prefix
//     that ends on such a multiple (any of them, uniformly).
//     Dropping a write below a kept one leaves zeros: size outlives data.
//
// Afterwards volatile state equals durable state and nothing is pending.
func (f *FS) Crash(r Chooser, torn bool) CrashReport {
	var rep CrashReport
	inos := slices.Sorted(maps.Keys(f.inodes))

	// Draw each directory's surviving prefix, then shrink prefixes until no
	// cross-directory rename survives by one half only.
	var dirs []*inode
	keep := map[*inode]int{}
	for _, ino := range inos {
		d := f.inodes[ino]
		if !d.dir || len(d.nspending) == 0 {
			continue
		}
		k := 0
		if f.opts.StrictDirs {
			seqs := make([]uint64, len(d.nspending))
			for i, op := range d.nspending {
				seqs[i] = op.seq
			}
			k = Pick(r, Decision{Kind: NsPrefix, N: len(d.nspending) + 1, Seqs: seqs})
		}
		dirs = append(dirs, d)
		keep[d] = k
	}
	for changed := true; changed; {
		changed = false
		for _, d := range dirs {
			for i, op := range d.nspending[:keep[d]] {
				if op.pair == 0 {
					continue
				}
				if o, j := f.partner(d, op.pair); o == nil || j >= keep[o] {
					keep[d] = i
					changed = true
					break
				}
			}
		}
	}
	for _, d := range dirs {
		n, k := len(d.nspending), keep[d]
		for _, op := range d.nspending[:k] {
			f.applyNs(d, op)
		}
		f.dropNs(d, d.nspending[k:])
		rep.NamespaceOpsKept += k
		rep.NamespaceOpsLost += n - k
		rep.Lines = append(rep.Lines, fmt.Sprintf("ino %d: namespace ops kept %d of %d", d.ino, k, n))
	}
	for _, d := range dirs {
		d.nspending = nil
	}

	links := f.reachable(&rep)

	f.used = 0
	for _, ino := range inos {
		in := f.inodes[ino]
		nl, ok := links[ino]
		if !ok {
			delete(f.inodes, ino)
			rep.InodesDiscarded++
			continue
		}
		in.nlink, in.drefs = nl, nl
		if in.dir {
			in.entries = maps.Clone(in.dentries)
			continue
		}
		if len(in.pending) > 0 {
			f.crashFile(in, r, torn, &rep)
		}
		in.data.release()
		in.data = in.durable.clone()
		f.used += in.footprint()
	}
	return rep
}

// reachable walks durable entries breadth-first from the root, names in
// sorted order, and returns how many durable names each reachable inode has.
// A directory met a second time loses that entry, keeping the tree a tree.
func (f *FS) reachable(rep *CrashReport) map[Ino]int {
	links := map[Ino]int{RootIno: 1}
	queue := []*inode{f.inodes[RootIno]}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		for _, name := range slices.Sorted(maps.Keys(d.dentries)) {
			c := d.dentries[name]
			ci := f.inodes[c]
			if ci == nil {
				panic(fmt.Sprintf("disk: durable entry %q in dir %d names missing inode %d", name, d.ino, c))
			}
			if ci.dir {
				if links[c] > 0 {
					delete(d.dentries, name)
					rep.DirLinksRepaired++
					continue
				}
				queue = append(queue, ci)
			}
			links[c]++
		}
	}
	return links
}

func (f *FS) crashFile(in *inode, r Chooser, torn bool, rep *CrashReport) {
	var kept, dropped, tornN, tk, td int
	buf := &in.durable
	for _, op := range in.pending {
		if op.trunc {
			if Pick(r, Decision{Kind: Truncate, N: 2, Seq: op.seq}) == 0 {
				buf.truncate(op.off)
				rep.TruncatesKept++
				kept++
			} else {
				rep.TruncatesDropped++
				dropped++
			}
			continue
		}
		if op.lost {
			// The device never stored it: no draw, the write is simply gone.
			rep.WritesDropped++
			dropped++
			continue
		}
		n := len(op.data)
		first, cuts := tearCuts(op.off, n, f.unit)
		choices := 2
		if torn && cuts > 0 {
			choices = 3
		}
		switch Pick(r, Decision{Kind: Write, N: choices, Seq: op.seq}) {
		case 0:
			buf.writeAt(op.data, op.off)
			rep.WritesKept++
			kept++
		case 1:
			rep.WritesDropped++
			dropped++
		default:
			m := int(first + f.unit*int64(Pick(r, Decision{Kind: TearCut, N: cuts, Seq: op.seq})))
			buf.writeAt(op.data[:m], op.off)
			rep.WritesTorn++
			rep.TornBytesKept += int64(m)
			rep.TornBytesLost += int64(n - m)
			tornN++
			tk += m
			td += n - m
		}
	}
	in.pending, in.pendingBytes = nil, 0
	rep.Lines = append(rep.Lines, fmt.Sprintf("ino %d: ops kept %d dropped %d torn %d (bytes kept %d lost %d)", in.ino, kept, dropped, tornN, tk, td))
}

// tearCuts returns where a write of n bytes at off may be torn: the first
// prefix length that ends on a multiple of unit, and how many such lengths
// lie in 1..n-1 (unit apart). With unit 1 they are 1 and n-1.
func tearCuts(off int64, n int, unit int64) (first int64, count int) {
	first = (off/unit+1)*unit - off
	if first >= int64(n) {
		return first, 0
	}
	return first, int((int64(n)-1-first)/unit) + 1
}

// CutPoint draws how much of a write of n bytes at off lands before a crash
// interrupts it: 0, or a prefix that ends on a multiple of Options.TearUnit,
// uniformly among those. With TearUnit 1 it is r.IntN(n).
func (f *FS) CutPoint(r Chooser, off int64, n int) int {
	if n <= 0 {
		return 0
	}
	first, cuts := tearCuts(off, n, f.unit)
	i := Pick(r, Decision{Kind: InflightCut, N: cuts + 1})
	if i == 0 {
		return 0
	}
	return int(first + f.unit*int64(i-1))
}

// TearUnit is the granularity of torn writes (Options.TearUnit, 1 if unset).
func (f *FS) TearUnit() int64 { return f.unit }
