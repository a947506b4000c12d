// Package disk simulates the filesystem of one node. It is pure Go and
// single-threaded: the engine calls it from the WASI host layer, which keeps
// the guest's fd table and hands this package clean absolute paths ("/",
// "/data/kv.log") and inode numbers.
//
// The model is inode-based. Every regular file has volatile content (what
// reads see), durable content (what survives a crash) and a list of pending
// operations issued since its last sync.
//
// Content is sparse and shared. A file's bytes live in PageSize pages under a
// persistent radix tree (content.go): a page never written is a hole and
// reads as zeros, so growing a file by truncate (how etcd preallocates its
// 64 MB WAL segments) costs O(1) and allocates nothing. The volatile and
// durable versions share every page neither changed since they were last
// equal, copying a page (and the tree nodes above it) only when one side
// writes to it. A Sync replays the pending operations onto the durable
// version, costing the pages they touch; a Crash rebuilds the durable
// version from its pending operations and then makes the volatile version a
// clone of it in O(1). The footprint counted against Options.MaxBytes is
// allocated pages, not sizes. Every directory has volatile
// entries, durable entries and a list of pending namespace operations. A
// Crash rebuilds the disk from durable state plus a random selection of the
// pending operations, drawn from a caller-supplied random stream, so the same
// stream always yields the same disk.
//
// Durability rules:
//
//   - File data becomes durable when the file is synced (fd_sync or
//     fd_datasync). O_SYNC and O_DSYNC writes need no support here: the host
//     layer calls Sync right after WriteAt.
//   - By default namespace operations (create, mkdir, unlink, rmdir, rename)
//     are durable immediately and in order, like a journaling filesystem
//     (ext4 data=ordered). A new file is durably present but empty until its
//     data is synced. Syncing a directory is a no-op.
//   - With Options.StrictDirs a namespace operation is durable only once its
//     parent directory has been synced. Because durable entries belong to the
//     directory inode, a renamed directory whose own entries were never synced
//     comes back empty after a crash. A rename across directories stays atomic:
//     its two halves become durable together (when either directory is
//     synced) or are lost together, so the entry ends up in exactly one of the
//     two directories.
//   - A crash tears a pending write only at file offsets that are multiples of
//     Options.TearUnit (sectors are written whole).
//   - A failed sync (fsyncgate, as on Linux) returns EIO and forgets the
//     pending operations without persisting them: the data stays readable but
//     a later successful sync does not persist it.
//
// Unlinked inodes stay readable and writable through their Ino until the next
// Crash, or until the host layer calls Release once the last fd is closed.
//
// It owns the files, directories and their durable and pending state. It may not read
// a clock (file times come from Options.Now, the node's virtual clock), draw randomness
// other than from the stream a Crash is given, or know of fds, guests or faults: which
// op crashes is the engine's decision.
package disk

import (
	"maps"
	"slices"
	"strings"
)

// Ino identifies an inode. Inode numbers are never reused within an FS.
type Ino uint64

// RootIno is the inode of the root directory.
const RootIno Ino = 1

// MaxFileSize is the largest size a regular file may reach when
// Options.MaxFileBytes is 0 (1 GiB). Writes or truncates past it fail with
// EFBIG.
const MaxFileSize = 1 << 30

// DefaultMaxBytes is the disk capacity used when Options.MaxBytes is 0.
const DefaultMaxBytes = 256 << 20

// Options configures an FS. The *Noop, RenameNonAtomic and ReorderSync
// fields are mutation operators: they make the simulated OS lie about
// durability, so that a test suite that passes against them is shown not to
// check durability at all.
type Options struct {
	// StrictDirs makes namespace operations durable only once the parent
	// directory is synced.
	StrictDirs bool

	// FsyncNoop makes every Sync return nil and persist nothing; the pending
	// operations stay pending (and may still survive a crash by chance).
	FsyncNoop bool
	// FdatasyncNoop does the same for data-only syncs (fd_datasync) only.
	FdatasyncNoop bool
	// DirFsyncNoop makes syncing a directory persist nothing. It matters with
	// StrictDirs, and with RenameNonAtomic.
	DirFsyncNoop bool
	// RenameNonAtomic makes a rename that replaces an existing target remove
	// both the target and the old name durably at once, while the link under
	// the new name becomes durable only at the next sync of its directory.
	// A crash in between loses the file under both names. In the default
	// mode such a pending link never survives a crash; with StrictDirs it is
	// one more pending namespace operation of the directory.
	RenameNonAtomic bool
	// ReorderSync makes a Sync persist all pending operations but the last,
	// which stays pending until the next sync. The rule needs no randomness
	// at sync time. Adjacent writes are coalesced into one pending operation,
	// so a file written only by appends persists nothing on its first sync.
	ReorderSync bool

	// MaxBytes caps the disk's footprint; writes that would exceed it fail
	// with ENOSPC. 0 means DefaultMaxBytes. The footprint of a file counts
	// allocated pages as Linux counts allocated blocks: PageSize times the
	// larger of its volatile and durable page counts, plus the bytes of its
	// pending writes. A page is allocated when a write first touches it;
	// holes (a truncate that grows the file, a write past the end) count
	// nothing, and a 10-byte file counts one page. Unsynced data counts
	// twice (page cache and disk), so a guest that overwrites without ever
	// syncing is bounded too. Pages shared by the volatile and durable
	// content count once, and each exists at most twice in host memory, so
	// memory stays within a small multiple of MaxBytes.
	MaxBytes int64
	// MaxFileBytes caps the size of one regular file; writes and truncates
	// past it fail with EFBIG. 0 means MaxFileSize.
	MaxFileBytes int64

	// TearUnit is the granularity of torn writes: a crash cuts a pending
	// write only at file offsets that are multiples of TearUnit (the sector
	// size: a sector is written whole or not at all), so a write that does
	// not cross such a boundary is kept whole or dropped. 0 means 1
	// (byte-granular tears).
	TearUnit int64

	// Now returns the time, in nanoseconds since the Unix epoch, that
	// stamps atime, mtime and ctime. nil stamps 0.
	Now func() int64
}

// FS is one node's simulated filesystem. It persists across the node's
// incarnations: the engine calls Crash between them. It is not safe for
// concurrent use.
type FS struct {
	opts     Options
	maxBytes int64
	maxFile  int64
	unit     int64
	// pairs numbers the two halves of cross-directory renames (see nsOp.pair).
	pairs uint64
	// seq numbers pending operations in the order they were issued, across
	// files and directories, for systematic crash states (Pending).
	seq    uint64
	inodes map[Ino]*inode
	next   Ino
	used   int64
}

type inode struct {
	ino   Ino
	dir   bool
	nlink int // volatile names
	// drefs counts durable entries and pending links naming this inode. An
	// inode with nlink == 0 and drefs == 0 cannot come back after a crash.
	drefs int

	// Regular files.
	data         content // volatile content
	durable      content // shares unchanged pages with data
	pending      []fileOp
	pendingBytes int64
	spare        []byte // reusable buffer for the next pending write
	// bad are the file's unreadable sector ranges (latent sector errors,
	// devfault.go), sorted by offset and disjoint. They belong to the device:
	// a crash keeps them.
	bad []sectorRange

	// Directories.
	entries   map[string]Ino // volatile
	dentries  map[string]Ino // durable
	nspending []nsOp

	// Times in ns since the epoch, as Linux keeps them. They are inode
	// metadata, journaled with it: a crash keeps them as they were.
	atime, mtime, ctime int64
}

// fileOp is a pending write (data at off) or truncate (to size off).
type fileOp struct {
	trunc bool
	// lost marks a write the device acknowledges and never stores (a lying
	// disk, devfault.go): a sync does not persist it and a crash drops it.
	lost bool
	off  int64
	data []byte // owned by the op
	seq  uint64 // issue order (FS.seq); a coalesced write keeps its first
}

// nsOp is a pending change to one directory's entries, applied atomically:
// remove from (same-directory rename), then set name to ino, or remove name
// when ino is 0.
//
// A rename across directories is two ops, the removal in the old directory
// and the link in the new one, sharing a non-zero pair number. They become
// durable together or not at all: syncing either directory persists both
// (and whatever precedes the other half in its own directory), and a crash
// keeps both or neither, so the file is afterwards in exactly one of the two
// directories, as after a journaled rename.
type nsOp struct {
	name string
	ino  Ino
	from string
	pair uint64
	seq  uint64 // issue order (FS.seq)
}

// New returns an FS holding only an empty root directory.
func New(opts Options) *FS {
	f := &FS{opts: opts, maxBytes: opts.MaxBytes, maxFile: opts.MaxFileBytes, unit: opts.TearUnit,
		inodes: map[Ino]*inode{}, next: RootIno}
	if f.maxBytes <= 0 {
		f.maxBytes = DefaultMaxBytes
	}
	if f.maxFile <= 0 {
		f.maxFile = MaxFileSize
	}
	if f.unit <= 0 {
		f.unit = 1
	}
	root := f.newInode(true)
	root.nlink, root.drefs = 1, 1
	return f
}

func (f *FS) now() int64 {
	if f.opts.Now == nil {
		return 0
	}
	return f.opts.Now()
}

// MaxBytes is the disk's capacity; MaxFileBytes the largest size of a file.
func (f *FS) MaxBytes() int64 { return f.maxBytes }

func (f *FS) MaxFileBytes() int64 { return f.maxFile }

// modified stamps a change of in's content (mtime and ctime).
func (f *FS) modified(in *inode) {
	t := f.now()
	in.mtime, in.ctime = t, t
}

// changed stamps a change of in's metadata only (ctime), such as a new link.
func (f *FS) changed(in *inode) { in.ctime = f.now() }

// accessed stamps a read of in the way Linux's default relatime does: atime
// moves only if it is not newer than mtime or ctime, or is a day old.
func (f *FS) accessed(in *inode) {
	t := f.now()
	if in.atime <= in.mtime || in.atime <= in.ctime || t-in.atime >= 24*3600*1e9 {
		in.atime = t
	}
}

func (f *FS) newInode(dir bool) *inode {
	in := &inode{ino: f.next, dir: dir}
	t := f.now()
	in.atime, in.mtime, in.ctime = t, t, t
	if dir {
		in.entries, in.dentries = map[string]Ino{}, map[string]Ino{}
	}
	f.inodes[in.ino] = in
	f.next++
	return in
}

// Used reports the disk's current footprint in bytes (see Options.MaxBytes).
func (f *FS) Used() int64 { return f.used }

func (in *inode) footprint() int64 {
	return max(in.data.pages(), in.durable.pages())*PageSize + in.pendingBytes
}

// splitPath validates a clean absolute path and returns its components; the
// root has none.
func splitPath(path string) ([]string, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, EINVAL
	}
	if path == "/" {
		return nil, nil
	}
	comps := strings.Split(path[1:], "/")
	for _, c := range comps {
		if c == "" || c == "." || c == ".." {
			return nil, EINVAL
		}
	}
	return comps, nil
}

func (f *FS) resolve(comps []string) (*inode, error) {
	cur := f.inodes[RootIno]
	for _, c := range comps {
		if !cur.dir {
			return nil, ENOTDIR
		}
		ino, ok := cur.entries[c]
		if !ok {
			return nil, ENOENT
		}
		cur = f.inodes[ino]
	}
	return cur, nil
}

// errRoot is returned by parent for the root path; callers map it to the
// errno their operation wants.
var errRoot = EINVAL

// parent resolves the directory holding path and the last component.
func (f *FS) parent(path string) (*inode, string, bool, error) {
	comps, err := splitPath(path)
	if err != nil {
		return nil, "", false, err
	}
	if len(comps) == 0 {
		return nil, "", true, errRoot
	}
	d, err := f.resolve(comps[:len(comps)-1])
	if err != nil {
		return nil, "", false, err
	}
	if !d.dir {
		return nil, "", false, ENOTDIR
	}
	return d, comps[len(comps)-1], false, nil
}

func (f *FS) get(ino Ino) (*inode, error) {
	in, ok := f.inodes[ino]
	if !ok {
		return nil, EBADF
	}
	return in, nil
}

// Lookup resolves a clean absolute path to its inode. Errors: EINVAL for a
// malformed path, ENOENT, ENOTDIR.
func (f *FS) Lookup(path string) (Ino, error) {
	comps, err := splitPath(path)
	if err != nil {
		return 0, err
	}
	in, err := f.resolve(comps)
	if err != nil {
		return 0, err
	}
	return in.ino, nil
}

// Stat describes an inode as reads see it. Size is 0 for directories. Nlink
// counts links as Linux does: for a file its names (hard links), 0 once
// unlinked; for a directory 2 plus its subdirectories ("." and each
// subdirectory's ".."), 0 once removed. Times are ns since the epoch.
type Stat struct {
	Ino                 Ino
	Dir                 bool
	Size                int64
	Nlink               int
	Atime, Mtime, Ctime int64
}

// Stat returns the volatile attributes of ino. Errors: EBADF.
func (f *FS) Stat(ino Ino) (Stat, error) {
	in, err := f.get(ino)
	if err != nil {
		return Stat{}, err
	}
	st := Stat{Ino: in.ino, Dir: in.dir, Size: in.data.size, Nlink: in.nlink,
		Atime: in.atime, Mtime: in.mtime, Ctime: in.ctime}
	if in.dir && in.nlink > 0 {
		st.Nlink = 2
		for _, c := range in.entries {
			if f.inodes[c].dir {
				st.Nlink++
			}
		}
	}
	return st, nil
}

// SetTimes sets ino's atime and mtime (nil leaves one as it is) and stamps
// ctime, like utimensat. Errors: EBADF.
func (f *FS) SetTimes(ino Ino, atime, mtime *int64) error {
	in, err := f.get(ino)
	if err != nil {
		return err
	}
	if atime != nil {
		in.atime = *atime
	}
	if mtime != nil {
		in.mtime = *mtime
	}
	f.changed(in)
	return nil
}

// Entry is one name in a directory.
type Entry struct {
	Name string
	Ino  Ino
	Dir  bool
}

// ReadDir lists the volatile entries of directory ino, sorted by name.
// Errors: EBADF, ENOTDIR.
func (f *FS) ReadDir(ino Ino) ([]Entry, error) {
	d, err := f.get(ino)
	if err != nil {
		return nil, err
	}
	if !d.dir {
		return nil, ENOTDIR
	}
	f.accessed(d)
	out := make([]Entry, 0, len(d.entries))
	for _, name := range slices.Sorted(maps.Keys(d.entries)) {
		c := d.entries[name]
		out = append(out, Entry{Name: name, Ino: c, Dir: f.inodes[c].dir})
	}
	return out, nil
}
