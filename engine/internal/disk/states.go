package disk

import (
	"cmp"
	"maps"
	"slices"
)

// Clone returns an independent copy of the filesystem, volatile and durable
// state and pending operations alike. Contents share pages copy-on-write, so
// a clone costs a walk of the inodes, not of the data. Call Discard when done
// so that the original's pages stop counting the clone's references.
func (f *FS) Clone() *FS {
	c := *f
	c.opts.Now = nil // a clone is for crash states: no time passes in it
	c.inodes = make(map[Ino]*inode, len(f.inodes))
	for _, ino := range slices.Sorted(maps.Keys(f.inodes)) {
		in := *f.inodes[ino]
		in.data = f.inodes[ino].data.clone()
		in.durable = f.inodes[ino].durable.clone()
		in.pending = slices.Clone(in.pending)
		in.spare = nil
		if in.dir {
			in.entries = maps.Clone(in.entries)
			in.dentries = maps.Clone(in.dentries)
			in.nspending = slices.Clone(in.nspending)
		}
		c.inodes[ino] = &in
	}
	return &c
}

// Discard releases the clone's contents.
func (f *FS) Discard() {
	for _, ino := range slices.Sorted(maps.Keys(f.inodes)) {
		in := f.inodes[ino]
		in.data.release()
		in.durable.release()
	}
	f.inodes = nil
}

// PendingOp is one operation that a crash may keep or lose.
type PendingOp struct {
	Seq  uint64 // issue order
	Dir  bool   // a namespace op (else a write or truncate)
	Ino  Ino    // the file, or the directory
	Cuts int    // tear points of a write (0: it cannot tear, or it is not a write)
}

// Pending lists the pending operations by issue order. Both halves of a
// cross-directory rename share one Seq and are listed once.
func (f *FS) Pending() []PendingOp {
	var out []PendingOp
	seen := map[uint64]bool{}
	for _, ino := range slices.Sorted(maps.Keys(f.inodes)) {
		in := f.inodes[ino]
		for _, op := range in.nspending {
			if !seen[op.seq] {
				seen[op.seq] = true
				out = append(out, PendingOp{Seq: op.seq, Dir: true, Ino: ino})
			}
		}
		for _, op := range in.pending {
			p := PendingOp{Seq: op.seq, Ino: ino}
			if !op.trunc {
				_, p.Cuts = tearCuts(op.off, len(op.data), f.unit)
			}
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b PendingOp) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}
