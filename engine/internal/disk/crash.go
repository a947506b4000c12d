package disk

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
)

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
//     all lost, with no draw.
//  2. Inodes not reachable from the root through durable entries are
//     discarded.
//  3. For each surviving file by Ino, content = durable content, then each
//     pending operation in order is applied or dropped, or, if torn and it is
//     a write of at least 2 bytes, applied as a prefix of 1..len-1 bytes.
//     Dropping a write below a kept one leaves zeros: size outlives data.
//
// Afterwards volatile state equals durable state and nothing is pending.
func (f *FS) Crash(r *rand.Rand, torn bool) CrashReport {
	var rep CrashReport
	inos := slices.Sorted(maps.Keys(f.inodes))

	for _, ino := range inos {
		d := f.inodes[ino]
		n := len(d.nspending)
		if !d.dir || n == 0 {
			continue
		}
		k := 0
		if f.opts.StrictDirs {
			k = r.IntN(n + 1)
		}
		for _, op := range d.nspending[:k] {
			f.applyNs(d, op)
		}
		f.dropNs(d, d.nspending[k:])
		d.nspending = nil
		rep.NamespaceOpsKept += k
		rep.NamespaceOpsLost += n - k
		rep.Lines = append(rep.Lines, fmt.Sprintf("ino %d: namespace ops kept %d of %d", ino, k, n))
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
		in.data = slices.Clone(in.durable)
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

func (f *FS) crashFile(in *inode, r *rand.Rand, torn bool, rep *CrashReport) {
	var kept, dropped, tornN, tk, td int
	buf := in.durable
	for _, op := range in.pending {
		if op.trunc {
			if r.IntN(2) == 0 {
				buf = truncTo(buf, op.off)
				rep.TruncatesKept++
				kept++
			} else {
				rep.TruncatesDropped++
				dropped++
			}
			continue
		}
		n := len(op.data)
		choices := 2
		if torn && n >= 2 {
			choices = 3
		}
		switch r.IntN(choices) {
		case 0:
			buf = writeInto(buf, op.off, op.data)
			rep.WritesKept++
			kept++
		case 1:
			rep.WritesDropped++
			dropped++
		default:
			m := 1 + r.IntN(n-1)
			buf = writeInto(buf, op.off, op.data[:m])
			rep.WritesTorn++
			rep.TornBytesKept += int64(m)
			rep.TornBytesLost += int64(n - m)
			tornN++
			tk += m
			td += n - m
		}
	}
	in.durable = buf
	in.pending, in.pendingBytes = nil, 0
	rep.Lines = append(rep.Lines, fmt.Sprintf("ino %d: ops kept %d dropped %d torn %d (bytes kept %d lost %d)", in.ino, kept, dropped, tornN, tk, td))
}
