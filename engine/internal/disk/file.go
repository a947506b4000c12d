package disk

import (
	"cmp"
	"maps"
	"slices"
)

func (f *FS) file(ino Ino) (*inode, error) {
	in, err := f.get(ino)
	if err != nil {
		return nil, err
	}
	if in.dir {
		return nil, EISDIR
	}
	return in, nil
}

// ReadAt reads volatile content at off into p. Like WASI fd_pread it returns
// a short count, and no error, at end of file. Errors: EBADF, EISDIR, EINVAL
// for a negative offset.
func (f *FS) ReadAt(ino Ino, p []byte, off int64) (int, error) {
	in, err := f.file(ino)
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, EINVAL
	}
	f.accessed(in)
	if b, ok := in.firstBad(off, int64(len(p))); ok {
		// A read that reaches an unreadable sector stops before it, as Linux's
		// buffered read returns what it copied before the failing page; one
		// that starts in it fails.
		if b <= off {
			return 0, EIO
		}
		p = p[:b-off]
	}
	return in.data.readAt(p, off), nil
}

// WriteAt writes p at off, extending the file with zeros if off is past its
// end, and records the write as pending. An empty p changes nothing. Errors:
// EBADF, EISDIR, EINVAL (negative off), EFBIG, ENOSPC.
func (f *FS) WriteAt(ino Ino, p []byte, off int64) (int, error) {
	return f.WriteAtPartial(ino, p, off, len(p))
}

// WriteAtPartial is WriteAt of only the first n bytes of p. The engine uses
// it for a crash planned during a write: it applies the torn prefix, then
// calls Crash, which may keep or drop that prefix like any pending write.
func (f *FS) WriteAtPartial(ino Ino, p []byte, off int64, n int) (int, error) {
	in, err := f.file(ino)
	if err != nil {
		return 0, err
	}
	if off < 0 || n < 0 || n > len(p) {
		return 0, EINVAL
	}
	p = p[:n]
	if len(p) == 0 {
		return 0, nil
	}
	end := off + int64(len(p))
	if end > f.maxFile {
		return 0, EFBIG
	}
	pages := max(in.data.pages()+in.data.newPages(off, len(p)), in.durable.pages())
	if err := f.reserve(in, pages*PageSize+in.pendingBytes+int64(len(p))); err != nil {
		return 0, err
	}
	in.data.writeAt(p, off)
	in.remap(off, int64(len(p)))
	f.modified(in)
	// Coalesce a write that continues the previous one (appends, sequential
	// writes): one record keeps pending small and appends amortised O(len),
	// and a torn prefix of the combined record is still a valid crash state.
	if k := len(in.pending); k > 0 {
		last := &in.pending[k-1]
		if !last.trunc && !last.lost && last.off+int64(len(last.data)) == off {
			last.data = append(last.data, p...)
			in.pendingBytes += int64(len(p))
			return len(p), nil
		}
	}
	f.seq++
	in.pending = append(in.pending, fileOp{off: off, data: append(in.spare, p...), seq: f.seq})
	in.spare = nil
	in.pendingBytes += int64(len(p))
	return len(p), nil
}

// reserve checks that in may grow to footprint foot and accounts for it.
func (f *FS) reserve(in *inode, foot int64) error {
	delta := foot - in.footprint()
	if delta > 0 && f.used+delta > f.maxBytes {
		return ENOSPC
	}
	f.used += delta
	return nil
}

// Truncate sets the volatile size, zero-filling when growing, and records a
// pending truncate. Growing allocates no pages (the new range is a hole, as
// ftruncate leaves it on Linux), so it never fails with ENOSPC; shrinking
// frees the pages past the new size. Errors: EBADF, EISDIR, EINVAL (negative
// size), EFBIG.
func (f *FS) Truncate(ino Ino, size int64) error {
	in, err := f.file(ino)
	if err != nil {
		return err
	}
	if size < 0 {
		return EINVAL
	}
	if size > f.maxFile {
		return EFBIG
	}
	old := in.footprint()
	in.data.truncate(size)
	in.dropBadFrom(size)
	f.used += in.footprint() - old
	f.modified(in)
	f.seq++
	in.pending = append(in.pending, fileOp{trunc: true, off: size, seq: f.seq})
	return nil
}

// Sync makes ino's pending operations durable: for a file its writes and
// truncates, replayed in order onto the durable content (not a copy of the
// volatile content, which may hold writes forgotten by a failed sync); for a
// directory its pending namespace operations, which exist only with
// StrictDirs or RenameNonAtomic, so syncing a directory is otherwise a no-op.
// dataOnly marks fd_datasync and matters only for FdatasyncNoop.
//
// With fail set, Sync is an injected I/O error as Linux reports it
// (fsyncgate): it returns EIO and forgets the pending operations without
// persisting them, while the volatile content stays readable. A later
// successful Sync therefore persists only what was done after the failure.
// A failed sync of a directory persists nothing and forgets nothing: its
// namespace operations stay pending.
//
// Errors: EBADF, EIO.
func (f *FS) Sync(ino Ino, dataOnly bool, fail bool) error {
	in, err := f.get(ino)
	if err != nil {
		return err
	}
	if fail {
		// A directory's namespace operations stay pending: forgetting them
		// would let the durable tree drift from the one later operations
		// build on (a file renamed on could then be durable in two
		// directories, which no journaling filesystem produces).
		if !in.dir {
			f.used -= in.pendingBytes
			in.pending, in.pendingBytes = nil, 0
		}
		return EIO
	}
	if f.opts.FsyncNoop || (dataOnly && f.opts.FdatasyncNoop) || (in.dir && f.opts.DirFsyncNoop) {
		return nil
	}
	if in.dir {
		n := len(in.nspending)
		if f.opts.ReorderSync && n > 0 {
			n--
		}
		f.persistNs(in, n)
		return nil
	}
	n := len(in.pending)
	if f.opts.ReorderSync && n > 0 {
		n--
	}
	old := in.footprint()
	for _, op := range in.pending[:n] {
		if !op.lost {
			in.durable.apply(op)
		}
		if !op.trunc {
			in.pendingBytes -= int64(len(op.data))
		}
	}
	// Reuse the pending array and, for the steady append+sync loop, the
	// last write's buffer: its bytes now live in durable.
	if n > 0 && n == len(in.pending) && !in.pending[n-1].trunc && cap(in.pending[n-1].data) <= spareMax {
		in.spare = in.pending[n-1].data[:0]
	}
	rest := copy(in.pending, in.pending[n:])
	clear(in.pending[rest:])
	in.pending = in.pending[:rest]
	f.used += in.footprint() - old
	return nil
}

// partner finds the other half of the cross-directory rename pair whose one
// half is pending in d: the directory holding it and its index there.
func (f *FS) partner(d *inode, pair uint64) (*inode, int) {
	for _, ino := range slices.Sorted(maps.Keys(f.inodes)) {
		o := f.inodes[ino]
		if !o.dir || o == d {
			continue
		}
		for i, op := range o.nspending {
			if op.pair == pair {
				return o, i
			}
		}
	}
	return nil, -1
}

// persistNs makes the first n pending namespace operations of directory d
// durable, together with the other half of every cross-directory rename
// among them and, to keep each directory's operations in order, whatever
// precedes that half in its own directory (transitively).
func (f *FS) persistNs(d *inode, n int) {
	upto := map[*inode]int{d: n}
	scanned := map[*inode]int{}
	work := []*inode{d}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		for i := scanned[x]; i < upto[x]; i++ {
			op := x.nspending[i]
			if op.pair == 0 {
				continue
			}
			if o, j := f.partner(x, op.pair); o != nil && upto[o] < j+1 {
				upto[o] = j + 1
				work = append(work, o)
			}
		}
		scanned[x] = max(scanned[x], upto[x])
	}
	for _, x := range slices.SortedFunc(maps.Keys(upto), func(a, b *inode) int { return cmp.Compare(a.ino, b.ino) }) {
		k := upto[x]
		for _, op := range x.nspending[:k] {
			f.applyNs(x, op)
		}
		x.nspending = slices.Clone(x.nspending[k:])
	}
}

// spareMax bounds the write buffer an inode keeps for reuse after a sync.
const spareMax = 64 << 10

// apply replays a pending operation onto c.
func (c *content) apply(op fileOp) {
	if op.trunc {
		c.truncate(op.off)
		return
	}
	c.writeAt(op.data, op.off)
}
