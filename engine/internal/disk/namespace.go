package disk

import (
	"strings"
)

// recordNs records a namespace operation on directory d: durable at once in
// the default mode, pending otherwise. A directory that already has pending
// operations (possible in the default mode only under RenameNonAtomic)
// queues new ones behind them so that they become durable in order.
func (f *FS) recordNs(d *inode, op nsOp) {
	f.seq++
	op.seq = f.seq
	if op.ino != 0 {
		f.inodes[op.ino].drefs++
	}
	f.modified(d)
	if !f.opts.StrictDirs && len(d.nspending) == 0 {
		f.applyNs(d, op)
		return
	}
	d.nspending = append(d.nspending, op)
}

// applyNs makes op durable in d; op's pending reference, counted by
// recordNs, becomes the durable entry's.
func (f *FS) applyNs(d *inode, op nsOp) {
	if op.from != "" {
		f.dunlink(d, op.from)
	}
	f.dunlink(d, op.name)
	if op.ino != 0 {
		d.dentries[op.name] = op.ino
	}
}

// dropNs forgets d's pending operations without applying them.
func (f *FS) dropNs(d *inode, ops []nsOp) {
	for _, op := range ops {
		if op.ino != 0 {
			f.inodes[op.ino].drefs--
		}
	}
}

func (f *FS) dunlink(d *inode, name string) {
	if ino, ok := d.dentries[name]; ok {
		delete(d.dentries, name)
		if in := f.inodes[ino]; in != nil {
			in.drefs--
		}
	}
}

// Create makes a new empty file, or directory if dir, at path. Errors:
// EEXIST (also for "/"), ENOENT if the parent is missing, ENOTDIR, EINVAL.
func (f *FS) Create(path string, dir bool) (Ino, error) {
	d, name, root, err := f.parent(path)
	if root {
		return 0, EEXIST
	}
	if err != nil {
		return 0, err
	}
	if _, ok := d.entries[name]; ok {
		return 0, EEXIST
	}
	in := f.newInode(dir)
	in.nlink = 1
	d.entries[name] = in.ino
	f.recordNs(d, nsOp{name: name, ino: in.ino})
	return in.ino, nil
}

// Link gives the regular file at oldpath a further name, newpath (a hard
// link). Errors: EPERM for a directory (as Linux), EEXIST, ENOENT, ENOTDIR,
// EINVAL.
func (f *FS) Link(oldpath, newpath string) error {
	comps, err := splitPath(oldpath)
	if err != nil {
		return err
	}
	in, err := f.resolve(comps)
	if err != nil {
		return err
	}
	d, name, root, err := f.parent(newpath)
	if root {
		return EEXIST
	}
	if err != nil {
		return err
	}
	if _, ok := d.entries[name]; ok {
		return EEXIST
	}
	if in.dir {
		return EPERM
	}
	in.nlink++
	f.changed(in)
	d.entries[name] = in.ino
	f.recordNs(d, nsOp{name: name, ino: in.ino})
	return nil
}

// Unlink removes the name of a regular file. The inode stays usable through
// its Ino. Errors: EISDIR (also for "/"), ENOENT, ENOTDIR, EINVAL.
func (f *FS) Unlink(path string) error {
	d, name, root, err := f.parent(path)
	if root {
		return EISDIR
	}
	if err != nil {
		return err
	}
	ino, ok := d.entries[name]
	if !ok {
		return ENOENT
	}
	in := f.inodes[ino]
	if in.dir {
		return EISDIR
	}
	f.removeName(d, name, in)
	return nil
}

// Rmdir removes an empty directory. Errors: ENOTEMPTY, ENOTDIR, ENOENT,
// EINVAL (also for "/").
func (f *FS) Rmdir(path string) error {
	d, name, _, err := f.parent(path)
	if err != nil {
		return err
	}
	ino, ok := d.entries[name]
	if !ok {
		return ENOENT
	}
	in := f.inodes[ino]
	if !in.dir {
		return ENOTDIR
	}
	if len(in.entries) > 0 {
		return ENOTEMPTY
	}
	f.removeName(d, name, in)
	return nil
}

func (f *FS) removeName(d *inode, name string, in *inode) {
	delete(d.entries, name)
	in.nlink--
	f.changed(in)
	f.recordNs(d, nsOp{name: name})
}

// Rename moves oldpath to newpath, atomically replacing a file target, or an
// empty directory target when oldpath is a directory (POSIX rename). Errors:
// ENOENT, ENOTDIR, EISDIR (file over directory), ENOTEMPTY, EINVAL (root, or
// a directory moved into its own subtree).
func (f *FS) Rename(oldpath, newpath string) error {
	src, oldname, rootOld, err := f.parent(oldpath)
	if err != nil && !rootOld {
		return err
	}
	dst, newname, rootNew, err := f.parent(newpath)
	if err != nil && !rootNew {
		return err
	}
	if rootOld || rootNew {
		return EINVAL
	}
	ino, ok := src.entries[oldname]
	if !ok {
		return ENOENT
	}
	in := f.inodes[ino]
	if oldpath == newpath {
		return nil
	}
	if in.dir && strings.HasPrefix(newpath, oldpath+"/") {
		return EINVAL
	}
	var target *inode
	if t, ok := dst.entries[newname]; ok {
		target = f.inodes[t]
		if target == in {
			return nil
		}
		switch {
		case in.dir && !target.dir:
			return ENOTDIR
		case !in.dir && target.dir:
			return EISDIR
		case target.dir && len(target.entries) > 0:
			return ENOTEMPTY
		}
	}

	delete(src.entries, oldname)
	dst.entries[newname] = ino
	f.changed(in)
	if target != nil {
		target.nlink--
		f.changed(target)
	}

	if f.opts.RenameNonAtomic && target != nil {
		f.dunlink(dst, newname)
		f.dunlink(src, oldname)
		in.drefs++
		f.seq++
		dst.nspending = append(dst.nspending, nsOp{name: newname, ino: ino, seq: f.seq})
		return nil
	}
	if src == dst {
		f.recordNs(src, nsOp{name: newname, ino: ino, from: oldname})
		return nil
	}
	f.pairs++
	f.seq++
	rm, ln := nsOp{name: oldname, pair: f.pairs, seq: f.seq}, nsOp{name: newname, ino: ino, pair: f.pairs, seq: f.seq}
	in.drefs++
	f.modified(src)
	f.modified(dst)
	if !f.opts.StrictDirs && len(src.nspending) == 0 && len(dst.nspending) == 0 {
		f.applyNs(src, rm)
		f.applyNs(dst, ln)
		return nil
	}
	// Strict mode, or the default mode behind pending ops (RenameNonAtomic):
	// both halves wait, to land together or not at all.
	src.nspending = append(src.nspending, rm)
	dst.nspending = append(dst.nspending, ln)
	return nil
}

// Release tells the FS that no fd refers to ino any more. An inode that has
// no name and cannot come back after a crash is freed, so that a guest that
// keeps creating and unlinking temporary files does not fill the disk.
// Releasing a linked inode does nothing. Errors: EBADF.
func (f *FS) Release(ino Ino) error {
	in, err := f.get(ino)
	if err != nil {
		return err
	}
	if in.nlink > 0 || in.drefs > 0 || ino == RootIno {
		return nil
	}
	// A freed directory's durable entries keep their children's drefs:
	// over-counting only delays freeing until the next Crash recounts.
	f.used -= in.footprint()
	delete(f.inodes, ino)
	return nil
}
