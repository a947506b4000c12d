package wasi

import (
	"path"
	"strings"

	"github.com/tetratelabs/wazero/api"
)

// The path_* functions, relative to a directory fd.

func (h *Process) resolvePath(m api.Memory, dirfd, ptr, n uint32) (string, uint32) {
	p, _, errno := h.resolvePathSlash(m, dirfd, ptr, n)
	return p, errno
}

// resolvePathSlash is resolvePath that also reports a trailing slash, which on Linux
// requires the path to name a directory ("file/" is ENOTDIR).
func (h *Process) resolvePathSlash(m api.Memory, dirfd, ptr, n uint32) (string, bool, uint32) {
	e := h.fd(dirfd)
	if e == nil {
		return "", false, errnoBadf
	}
	if e.kind != fdDir {
		return "", false, errnoNotDir
	}
	p := readString(m, ptr, n)
	if strings.IndexByte(p, 0) >= 0 {
		return "", false, errnoInval
	}
	slash := strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.")
	return path.Join("/", e.path, p), slash, 0
}

// isFile reports whether p names an existing non-directory.
func (h *Process) isFile(p string) bool {
	d := h.p.Disk()
	ino, err := d.Lookup(p)
	if err != nil {
		return false
	}
	st, err := d.Stat(ino)
	return err == nil && !st.Dir
}

// renamed points the fds under oldpath to newpath after a rename, as a Linux fd follows
// its dentry: the trace, fault lines and call sites then name a file by its current path,
// and paths relative to a renamed directory's fd resolve inside it.
func (h *Process) renamed(oldpath, newpath string) {
	for _, e := range h.fds {
		if e == nil || (e.kind != fdFile && e.kind != fdDir) || e.preopen {
			continue
		}
		if e.path == oldpath {
			e.path = newpath
		} else if rest, ok := strings.CutPrefix(e.path, oldpath+"/"); ok {
			e.path = newpath + "/" + rest
		}
	}
}

func pathOpen(h *Process, m api.Memory, s []uint64) uint32 {
	dirfd, pptr, plen, oflags, fdflags, fdOut := u32(s, 0), u32(s, 2), u32(s, 3), u32(s, 4), u32(s, 7), u32(s, 8)
	p, slash, errno := h.resolvePathSlash(m, dirfd, pptr, plen)
	if errno != 0 {
		return errno
	}
	d := h.p.Disk()
	ino, err := d.Lookup(p)
	if err != nil {
		if errnoOf(err) != errnoNoent || oflags&oflagCreat == 0 {
			return errnoOf(err)
		}
		if slash {
			return errnoIsDir // open("new/", O_CREAT) on Linux
		}
		err = h.namespaceOp(h.beginDiskOp("create", p, ""), func() (err error) {
			ino, err = d.Create(p, oflags&oflagDirectory != 0)
			return err
		})
		if err != nil {
			return errnoOf(err)
		}
	} else if oflags&oflagCreat != 0 && oflags&oflagExcl != 0 {
		return errnoExist
	}
	st, err := d.Stat(ino)
	if err != nil {
		return errnoOf(err)
	}
	if (oflags&oflagDirectory != 0 || slash) && !st.Dir {
		return errnoNotDir
	}
	// Linux refuses to open a directory for writing, to truncate or to create it.
	if st.Dir && (s[5]&rightFdWrite != 0 || oflags&(oflagTrunc|oflagCreat) != 0) {
		return errnoIsDir
	}
	e := &fdEntry{kind: fdFile, ino: ino, path: p, flags: uint16(fdflags),
		noRead: s[5]&rightFdRead == 0, noWrite: s[5]&rightFdWrite == 0}
	if st.Dir {
		e.kind = fdDir
	} else if oflags&oflagTrunc != 0 && st.Size > 0 {
		err := h.namespaceOp(h.beginDiskOp("truncate", p, "0"), func() error { return d.Truncate(ino, 0) })
		if err != nil {
			return errnoOf(err)
		}
	}
	putU32(m, fdOut, h.newFD(e))
	return 0
}

func pathCreateDirectory(h *Process, m api.Memory, s []uint64) uint32 {
	p, errno := h.resolvePath(m, u32(s, 0), u32(s, 1), u32(s, 2))
	if errno != 0 {
		return errno
	}
	d := h.p.Disk()
	if _, err := d.Lookup(p); err == nil {
		return errnoExist
	}
	return errnoOf(h.namespaceOp(h.beginDiskOp("mkdir", p, ""), func() error {
		_, err := d.Create(p, true)
		return err
	}))
}

func pathFilestatGet(h *Process, m api.Memory, s []uint64) uint32 {
	p, slash, errno := h.resolvePathSlash(m, u32(s, 0), u32(s, 2), u32(s, 3))
	if errno != 0 {
		return errno
	}
	if slash && h.isFile(p) {
		return errnoNotDir
	}
	d := h.p.Disk()
	ino, err := d.Lookup(p)
	if err != nil {
		return errnoOf(err)
	}
	st, err := d.Stat(ino)
	if err != nil {
		return errnoOf(err)
	}
	return writeFilestat(m, u32(s, 4), st)
}

func pathFilestatSetTimes(h *Process, m api.Memory, s []uint64) uint32 {
	p, errno := h.resolvePath(m, u32(s, 0), u32(s, 2), u32(s, 3))
	if errno != 0 {
		return errno
	}
	ino, err := h.p.Disk().Lookup(p)
	if err != nil {
		return errnoOf(err)
	}
	return h.setTimes(ino, int64(s[4]), int64(s[5]), u32(s, 6))
}

// pathLink is link(2): a hard link, another name for the same file.
func pathLink(h *Process, m api.Memory, s []uint64) uint32 {
	from, fslash, errno := h.resolvePathSlash(m, u32(s, 0), u32(s, 2), u32(s, 3))
	if errno != 0 {
		return errno
	}
	to, tslash, errno := h.resolvePathSlash(m, u32(s, 4), u32(s, 5), u32(s, 6))
	if errno != 0 {
		return errno
	}
	d := h.p.Disk()
	if (fslash || tslash) && h.isFile(from) {
		return errnoNotDir
	}
	if _, err := d.Lookup(to); err == nil {
		return errnoExist
	}
	op := h.p.BeginDiskOp("link", "link", []string{from, to}, "-> "+to)
	return errnoOf(h.namespaceOp(op, func() error { return d.Link(from, to) }))
}

func pathSymlink(h *Process, m api.Memory, s []uint64) uint32  { return errnoNotSup }
func pathReadlink(h *Process, m api.Memory, s []uint64) uint32 { return errnoInval }

func pathRemoveDirectory(h *Process, m api.Memory, s []uint64) uint32 {
	p, errno := h.resolvePath(m, u32(s, 0), u32(s, 1), u32(s, 2))
	if errno != 0 {
		return errno
	}
	d := h.p.Disk()
	return errnoOf(h.namespaceOp(h.beginDiskOp("rmdir", p, ""), func() error { return d.Rmdir(p) }))
}

func pathUnlinkFile(h *Process, m api.Memory, s []uint64) uint32 {
	p, slash, errno := h.resolvePathSlash(m, u32(s, 0), u32(s, 1), u32(s, 2))
	if errno != 0 {
		return errno
	}
	if slash && h.isFile(p) {
		return errnoNotDir
	}
	d := h.p.Disk()
	return errnoOf(h.namespaceOp(h.beginDiskOp("unlink", p, ""), func() error { return d.Unlink(p) }))
}

func pathRename(h *Process, m api.Memory, s []uint64) uint32 {
	from, fslash, errno := h.resolvePathSlash(m, u32(s, 0), u32(s, 1), u32(s, 2))
	if errno != 0 {
		return errno
	}
	to, tslash, errno := h.resolvePathSlash(m, u32(s, 3), u32(s, 4), u32(s, 5))
	if errno != 0 {
		return errno
	}
	if (fslash || tslash) && h.isFile(from) {
		return errnoNotDir
	}
	d := h.p.Disk()
	if ino, err := d.Lookup(to); err == nil {
		if st, err := d.Stat(ino); err == nil && !st.Dir {
			h.p.CountReplace()
		}
	}
	op := h.p.BeginDiskOp("rename", "rename", []string{from, to}, "-> "+to)
	err := h.namespaceOp(op, func() error { return d.Rename(from, to) })
	if err == nil {
		h.renamed(from, to) // the fds' paths follow the file
	}
	return errnoOf(err)
}
