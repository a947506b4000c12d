package disk

import "slices"

// Device faults: what a drive does wrong below the filesystem. The engine decides when
// they happen (the disk package draws no randomness of its own); these methods apply
// them to the model.
//
//   - A latent sector error (MarkBad) makes a sector range unreadable: a read that
//     reaches it stops short before it, one that starts in it fails with EIO, also after
//     a crash, until a write covering the whole range remaps it (as a drive reallocates a
//     sector on write). A shrinking truncate frees it.
//   - A lost write (WriteAtLost) is acknowledged and readable from the page cache, but
//     the device never stores it: a sync persists every other pending write and not this
//     one, and a crash drops it.
//   - Corrupt changes a range of a file's durable content in place, as the device
//     returns it after a crash.

// sectorRange is an unreadable byte range [off, off+n) of a file.
type sectorRange struct{ off, n int64 }

// MarkBad makes [off, off+n) of the file unreadable (a latent sector error). Errors:
// EBADF, EISDIR, EINVAL (negative off or n < 1).
func (f *FS) MarkBad(ino Ino, off, n int64) error {
	in, err := f.file(ino)
	if err != nil {
		return err
	}
	if off < 0 || n < 1 {
		return EINVAL
	}
	in.bad = append(in.bad, sectorRange{off, n})
	slices.SortFunc(in.bad, func(a, b sectorRange) int {
		switch {
		case a.off < b.off:
			return -1
		case a.off > b.off:
			return 1
		}
		return 0
	})
	// Merge overlapping ranges, keeping them disjoint.
	out := in.bad[:1]
	for _, r := range in.bad[1:] {
		last := &out[len(out)-1]
		if r.off <= last.off+last.n {
			last.n = max(last.off+last.n, r.off+r.n) - last.off
			continue
		}
		out = append(out, r)
	}
	in.bad = out
	return nil
}

// BadRanges lists the file's unreadable ranges as offset, length pairs (for tests and
// traces).
func (f *FS) BadRanges(ino Ino) [][2]int64 {
	in, err := f.file(ino)
	if err != nil {
		return nil
	}
	var out [][2]int64
	for _, r := range in.bad {
		out = append(out, [2]int64{r.off, r.n})
	}
	return out
}

// firstBad returns the start of the first unreadable byte in [off, off+n), if any.
func (in *inode) firstBad(off, n int64) (int64, bool) {
	for _, r := range in.bad {
		if r.off < off+n && off < r.off+r.n {
			return max(r.off, off), true
		}
	}
	return 0, false
}

// remap forgets the unreadable ranges a write of [off, off+n) covers whole.
func (in *inode) remap(off, n int64) {
	if len(in.bad) == 0 {
		return
	}
	in.bad = slices.DeleteFunc(in.bad, func(r sectorRange) bool {
		return off <= r.off && r.off+r.n <= off+n
	})
}

// dropBadFrom forgets the unreadable ranges that a truncate to size frees.
func (in *inode) dropBadFrom(size int64) {
	if len(in.bad) == 0 {
		return
	}
	in.bad = slices.DeleteFunc(in.bad, func(r sectorRange) bool { return r.off >= size })
}

// WriteAtLost is WriteAt of a write the device acknowledges and never stores: it is
// readable until the next crash, a sync does not persist it, and a crash drops it.
func (f *FS) WriteAtLost(ino Ino, p []byte, off int64) (int, error) {
	n, err := f.WriteAt(ino, p, off)
	if err != nil || n == 0 {
		return n, err
	}
	in := f.inodes[ino]
	last := &in.pending[len(in.pending)-1]
	if last.off+int64(len(last.data)) != off+int64(n) || int64(len(last.data)) < int64(n) {
		panic("disk: WriteAtLost: the write is not the last pending op")
	}
	if int64(len(last.data)) > int64(n) {
		// WriteAt coalesced it into the previous write: split it off.
		keep := len(last.data) - n
		in.pending = append(in.pending, fileOp{off: off, data: append([]byte(nil), last.data[keep:]...)})
		last = &in.pending[len(in.pending)-2]
		last.data = last.data[:keep]
		last = &in.pending[len(in.pending)-1]
	}
	last.lost = true
	return n, nil
}

// Corrupt rewrites [off, off+n) of the file's durable content (clipped to its durable
// size) with fn's changes, in place and with nothing pending: the device returns other
// bytes than it was given. Volatile content changes the same way where it still equals
// the durable content, which is all of it right after a crash (the engine's use). It
// returns the number of bytes fn saw (0: the range is past the end of the file).
func (f *FS) Corrupt(ino Ino, off int64, n int, fn func(b []byte)) (int, error) {
	in, err := f.file(ino)
	if err != nil {
		return 0, err
	}
	if off < 0 || n < 0 {
		return 0, EINVAL
	}
	if end := in.durable.size; off+int64(n) > end {
		n = int(max(0, end-off))
	}
	if n == 0 {
		return 0, nil
	}
	if len(in.pending) > 0 {
		return 0, EINVAL // only a quiescent file (right after a crash) is corrupted
	}
	b := make([]byte, n)
	in.durable.readAt(b, off)
	fn(b)
	old := in.footprint()
	in.durable.writeAt(b, off)
	in.data.release()
	in.data = in.durable.clone()
	f.used += in.footprint() - old
	return n, nil
}
