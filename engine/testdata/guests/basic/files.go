package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/seedfall/seedfall/sim"
)

// files runs file-system operations under root and prints one line per result. The
// output must be the same natively and in the simulator, except lines starting "sim:".
func files(root string) {
	p := func(name string) string { return filepath.Join(root, name) }
	out := func(format string, a ...any) { fmt.Printf(format+"\n", a...) }
	step := func(name string, err error) { out("%s: %s", name, errName(err)) }

	step("mkdirall root", os.MkdirAll(root, 0o755))
	step("mkdir d", os.Mkdir(p("d"), 0o755))
	step("mkdir d again", os.Mkdir(p("d"), 0o755))
	step("mkdir in missing parent", os.Mkdir(p("nope/x"), 0o755))

	f, err := os.OpenFile(p("d/a"), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	step("create excl", err)
	_, err = os.OpenFile(p("d/a"), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	step("create excl again", err)
	n, err := f.Write([]byte("hello world"))
	out("write %d %s", n, errName(err))
	off, err := f.Seek(0, io.SeekCurrent)
	out("seek current %d %s", off, errName(err))
	off, err = f.Seek(-5, io.SeekEnd)
	out("seek end-5 %d %s", off, errName(err))
	off, err = f.Seek(2, io.SeekStart)
	out("seek start+2 %d %s", off, errName(err))
	_, err = f.Seek(-100, io.SeekCurrent)
	step("seek before start", err)
	_, err = f.Write([]byte("XY"))
	step("write at 2", err)
	n, err = f.WriteAt([]byte("ZZ"), 20)
	out("pwrite past end %d %s", n, errName(err))
	st, err := f.Stat()
	out("fstat size %d dir %v regular %v %s", st.Size(), st.IsDir(), st.Mode().IsRegular(), errName(err))
	buf := make([]byte, 5)
	n, err = f.ReadAt(buf, 0)
	out("pread 0 %d %q %s", n, buf[:n], errName(err))
	buf = make([]byte, 10)
	n, err = f.ReadAt(buf, 18)
	out("pread 18 %d %q %s", n, buf[:n], errName(err))
	off, _ = f.Seek(0, io.SeekCurrent)
	out("pread/pwrite left the offset at %d", off)
	step("fsync", f.Sync())
	step("close", f.Close())
	step("close again", f.Close())

	b, err := os.ReadFile(p("d/a"))
	out("readfile %q %s", b, errName(err))

	ro, err := os.Open(p("d/a"))
	step("open read-only", err)
	_, err = ro.Write([]byte("nope"))
	step("write to read-only fd", err)
	_, err = ro.WriteAt([]byte("nope"), 1)
	step("pwrite to read-only fd", err)
	step("ftruncate read-only fd", ro.Truncate(1))
	all, err := io.ReadAll(ro)
	out("read all %d %s", len(all), errName(err))
	n, err = ro.Read(buf)
	out("read at eof %d %s", n, errName(err))
	ro.Close()

	wo, err := os.OpenFile(p("d/a"), os.O_WRONLY, 0)
	step("open write-only", err)
	_, err = wo.Read(buf)
	step("read from write-only fd", err)
	wo.Close()

	ap, err := os.OpenFile(p("d/a"), os.O_APPEND|os.O_WRONLY, 0)
	step("open append", err)
	ap.Seek(0, io.SeekStart)
	_, err = ap.Write([]byte("!!"))
	step("append write after seek 0", err)
	_, err = ap.WriteAt([]byte("??"), 0)
	step("pwrite on append fd", err)
	ap.Close()
	b, _ = os.ReadFile(p("d/a"))
	out("after append %q", b)

	tr, err := os.OpenFile(p("d/a"), os.O_TRUNC|os.O_RDWR, 0)
	step("open trunc", err)
	st, _ = tr.Stat()
	out("size after trunc %d", st.Size())
	tr.Write([]byte("new"))
	tr.Close()
	step("truncate path to 6", os.Truncate(p("d/a"), 6))
	b, _ = os.ReadFile(p("d/a"))
	out("after grow %q", b)
	tf, _ := os.OpenFile(p("d/a"), os.O_RDWR, 0)
	step("ftruncate to 2", tf.Truncate(2))
	tf.Seek(5, io.SeekStart)
	tf.Write([]byte("H"))
	tf.Close()
	b, _ = os.ReadFile(p("d/a"))
	out("after shrink and write past end %q", b)
	step("truncate missing", os.Truncate(p("d/missing"), 1))

	st, err = os.Stat(p("d"))
	out("stat dir: dir %v %s", st != nil && st.IsDir(), errName(err))
	_, err = os.Stat(p("d/missing"))
	step("stat missing", err)
	_, err = os.Stat(p("d/a/x"))
	step("stat below a file", err)
	_, err = os.Open(p("d/missing"))
	step("open missing", err)

	for _, name := range []string{"c", "b", "e", "zz", "m"} {
		must(os.WriteFile(p("d/"+name), []byte("content of "+name), 0o644))
	}
	step("mkdir d/sub", os.Mkdir(p("d/sub"), 0o755))
	must(os.WriteFile(p("d/sub/inner"), []byte("inner"), 0o644))
	ents, err := os.ReadDir(p("d"))
	out("readdir %s %s", entNames(ents), errName(err))
	dh, err := os.Open(p("d"))
	step("open dir", err)
	names, err := dh.Readdirnames(-1)
	out("readdirnames count %d %s", len(names), errName(err))
	if sim.InSimulation() {
		out("sim: readdirnames in host order %s, sorted %v", strings.Join(names, " "), slices.IsSorted(names))
	}
	// Read in small batches: the cookie must carry on where the last batch ended.
	dh2, _ := os.Open(p("d"))
	var batched []string
	for {
		nb, err := dh2.Readdirnames(2)
		batched = append(batched, nb...)
		if err != nil {
			out("batched readdir end %s", errName(err))
			break
		}
	}
	dh2.Close()
	slices.Sort(batched)
	out("batched readdir %s", strings.Join(batched, " "))
	step("fsync dir", dh.Sync())
	_, err = dh.Read(buf)
	out("read a dir fd fails: %v", err != nil) // EISDIR natively; Go itself may say EINVAL
	dh.Close()
	_, err = os.ReadDir(p("d/a"))
	step("readdir of a file", err)

	step("rename b -> b2", os.Rename(p("d/b"), p("d/b2")))
	_, err = os.Stat(p("d/b"))
	step("stat old name", err)
	step("rename c over e", os.Rename(p("d/c"), p("d/e")))
	b, _ = os.ReadFile(p("d/e"))
	out("e now %q", b)
	step("rename missing", os.Rename(p("d/missing"), p("d/x")))
	step("rename file over dir", os.Rename(p("d/e"), p("d/sub")))
	step("rename dir over file", os.Rename(p("d/sub"), p("d/e")))
	step("rename dir into itself", os.Rename(p("d/sub"), p("d/sub/deeper")))
	step("mkdir d/full", os.Mkdir(p("d/full"), 0o755))
	must(os.WriteFile(p("d/full/x"), nil, 0o644))
	step("rename dir over non-empty dir", os.Rename(p("d/sub"), p("d/full")))
	step("rename dir", os.Rename(p("d/sub"), p("d/sub2")))
	b, err = os.ReadFile(p("d/sub2/inner"))
	out("through renamed dir %q %s", b, errName(err))
	step("rename across dirs", os.Rename(p("d/sub2/inner"), p("d/inner")))
	ents, _ = os.ReadDir(p("d/sub2"))
	out("sub2 now %s", entNames(ents))

	step("remove b2", os.Remove(p("d/b2")))
	step("remove b2 again", os.Remove(p("d/b2")))
	step("remove non-empty dir", os.Remove(p("d/full")))
	step("remove empty dir", os.Remove(p("d/sub2")))
	step("rmdir missing", syscallRmdir(p("d/sub2")))

	// An unlinked file stays readable through an open fd.
	h, err := os.Open(p("d/m"))
	step("open m", err)
	step("unlink open m", os.Remove(p("d/m")))
	all, err = io.ReadAll(h)
	out("read unlinked %q %s", all, errName(err))
	st, err = h.Stat()
	out("fstat unlinked size %d %s", st.Size(), errName(err))
	h.Close()
	_, err = os.Stat(p("d/m"))
	step("stat unlinked", err)

	// Two fds on one unlinked file: closing one leaves the other usable.
	h1, err := os.Open(p("d/zz"))
	step("open zz once", err)
	h2, err := os.Open(p("d/zz"))
	step("open zz twice", err)
	step("unlink zz", os.Remove(p("d/zz")))
	step("close first fd", h1.Close())
	all, err = io.ReadAll(h2)
	out("read through second fd %q %s", all, errName(err))
	h2.Close()

	// Two fds on one file see each other's writes; O_CREATE keeps what is there.
	w1, err := os.OpenFile(p("d/shared"), os.O_CREATE|os.O_RDWR, 0o644)
	step("create shared", err)
	w1.Write([]byte("first"))
	w2, err := os.OpenFile(p("d/shared"), os.O_CREATE|os.O_RDWR, 0o644)
	step("open shared again with O_CREATE", err)
	all, err = io.ReadAll(w2)
	out("second fd reads %q %s", all, errName(err))
	n, err = w2.Write(nil)
	out("empty write %d %s", n, errName(err))
	off, err = w1.Seek(10, io.SeekEnd)
	out("seek past end %d %s", off, errName(err))
	w1.Write([]byte("!"))
	st, _ = w2.Stat()
	out("size seen by the other fd %d", st.Size())
	step("ftruncate through one fd", w1.Truncate(3))
	buf = make([]byte, 8)
	n, err = w2.ReadAt(buf, 0)
	out("other fd after truncate %d %q %s", n, buf[:n], errName(err))
	w1.Close()
	w2.Close()
	step("rename onto itself", os.Rename(p("d/shared"), p("d/shared")))
	step("chtimes", os.Chtimes(p("d/shared"), time.Unix(1e9, 0), time.Unix(1e9, 0)))
	step("mkdirall deep", os.MkdirAll(p("d/x/y/z"), 0o755))
	step("mkdirall deep again", os.MkdirAll(p("d/x/y/z"), 0o755))
	step("write deep", os.WriteFile(p("d/x/y/z/f"), []byte("deep"), 0o644))
	// A file open in a directory that is renamed stays usable.
	df, err := os.OpenFile(p("d/x/y/z/f"), os.O_RDWR, 0)
	step("open deep", err)
	step("rename x", os.Rename(p("d/x"), p("d/x2")))
	df.WriteAt([]byte("DE"), 0)
	df.Close()
	b, err = os.ReadFile(p("d/x2/y/z/f"))
	out("deep after rename %q %s", b, errName(err))
	step("removeall x2", os.RemoveAll(p("d/x2")))

	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	step("write 1MiB", os.WriteFile(p("d/big"), big, 0o644))
	got, err := os.ReadFile(p("d/big"))
	out("read 1MiB: equal %v len %d %s", bytes.Equal(got, big), len(got), errName(err))
	sum := sha256.Sum256(got)
	out("sha256 %x", sum[:8])

	step("removeall d", os.RemoveAll(p("d")))
	_, err = os.Stat(p("d"))
	step("stat removed d", err)
	ents, err = os.ReadDir(root)
	out("root now %s %s", entNames(ents), errName(err))
}

// meta exercises file metadata the Linux way: hard links and link counts, times that
// follow the clock, and the errors of a trailing slash on a file and of opening a
// directory for writing. It prints only what must agree natively and in simulation.
func meta(root string) {
	p := func(name string) string { return filepath.Join(root, name) }
	out := func(format string, a ...any) { fmt.Printf(format+"\n", a...) }
	step := func(name string, err error) { out("%s: %s", name, errName(err)) }
	stat := func(name string) os.FileInfo {
		fi, err := os.Stat(p(name))
		must(err)
		return fi
	}
	nl := func(name string) { out("nlink %s %d", name, nlink(stat(name))) }

	step("mkdirall root", os.MkdirAll(root, 0o755))
	must(os.WriteFile(p("f"), []byte("one"), 0o644))
	nl("f")
	step("link f g", os.Link(p("f"), p("g")))
	nl("f")
	nl("g")
	out("f and g same file %v", os.SameFile(stat("f"), stat("g")))
	step("link f g again", os.Link(p("f"), p("g")))
	step("link missing h", os.Link(p("missing"), p("h")))
	step("link into missing dir", os.Link(p("f"), p("nodir/h")))
	step("mkdir d", os.Mkdir(p("d"), 0o755))
	step("link dir", os.Link(p("d"), p("d2")))
	must(os.WriteFile(p("g"), []byte("written via g"), 0o644))
	b, err := os.ReadFile(p("f"))
	out("f reads %q %s", b, errName(err))
	nl("d")
	step("mkdir d/sub", os.Mkdir(p("d/sub"), 0o755))
	step("mkdir d/sub2", os.Mkdir(p("d/sub2"), 0o755))
	nl("d")
	must(os.WriteFile(p("d/file"), nil, 0o644))
	nl("d")
	step("rename f d/f", os.Rename(p("f"), p("d/f")))
	nl("g")
	step("remove g", os.Remove(p("g")))
	nl("d/f")

	tmp, err := os.Create(p("tmp"))
	must(err)
	step("remove open tmp", os.Remove(p("tmp")))
	fi, err := tmp.Stat()
	must(err)
	out("nlink of an unlinked open file %d", nlink(fi))
	_, err = tmp.Write([]byte("still writable"))
	step("write unlinked open file", err)
	tmp.Close()

	_, err = os.Open(p("d/f") + "/")
	step("open file/", err)
	_, err = os.Stat(p("d/f") + "/")
	step("stat file/", err)
	_, err = os.OpenFile(p("new")+"/", os.O_CREATE|os.O_WRONLY, 0o644)
	step("create new/", err)
	step("remove file/", os.Remove(p("d/f")+"/"))
	step("rename file/", os.Rename(p("d/f")+"/", p("d/x")))
	dd, err := os.Open(p("d") + "/")
	step("open dir/", err)
	if err == nil {
		dd.Close()
	}
	_, err = os.OpenFile(p("d"), os.O_WRONLY, 0)
	step("open dir write-only", err)
	_, err = os.OpenFile(p("d"), os.O_RDWR, 0)
	step("open dir read-write", err)
	_, err = os.OpenFile(p("d"), os.O_RDONLY|os.O_CREATE, 0o644)
	step("open dir with O_CREATE", err)

	// Times: they follow the wall clock, and writes move mtime and ctime forward.
	before := stat("d/f")
	out("mtime within a minute of now %v", time.Since(before.ModTime()).Abs() < time.Minute)
	time.Sleep(50 * time.Millisecond)
	af, err := os.OpenFile(p("d/f"), os.O_APPEND|os.O_WRONLY, 0)
	must(err)
	_, err = af.Write([]byte("!"))
	must(err)
	af.Close()
	after := stat("d/f")
	out("write moved mtime forward %v", after.ModTime().After(before.ModTime()))
	out("write moved ctime forward %v", ctime(after).After(ctime(before)))
	out("mtime moved by at least the sleep %v", after.ModTime().Sub(before.ModTime()) >= 40*time.Millisecond)
	dir0 := stat("d")
	time.Sleep(50 * time.Millisecond)
	must(os.WriteFile(p("d/new"), nil, 0o644))
	out("create moved the directory's mtime forward %v", stat("d").ModTime().After(dir0.ModTime()))
	time.Sleep(50 * time.Millisecond)
	_, err = os.ReadFile(p("d/f"))
	must(err)
	out("read moved atime past mtime %v", atime(stat("d/f")).After(after.ModTime()))
	c0 := ctime(stat("d/f"))
	time.Sleep(50 * time.Millisecond)
	set := time.Date(2020, 2, 3, 4, 5, 6, 0, time.UTC)
	step("chtimes", os.Chtimes(p("d/f"), set, set))
	got := stat("d/f")
	out("chtimes set mtime %v atime %v", got.ModTime().Equal(set), atime(got).Equal(set))
	out("chtimes moved ctime forward %v", ctime(got).After(c0))
}

func entNames(ents []os.DirEntry) string {
	var s []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		s = append(s, n)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func syscallRmdir(path string) error {
	return syscall.Rmdir(path)
}

// errName names an error by its errno, so native and simulated runs print the same.
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	for _, e := range []struct {
		target error
		name   string
	}{
		{io.EOF, "EOF"},
		{os.ErrClosed, "closed"},
		{syscall.EEXIST, "EEXIST"},
		{syscall.ENOENT, "ENOENT"},
		{syscall.ENOTEMPTY, "ENOTEMPTY"},
		{syscall.EISDIR, "EISDIR"},
		{syscall.ENOTDIR, "ENOTDIR"},
		{syscall.EBADF, "EBADF"},
		{syscall.EINVAL, "EINVAL"},
		{syscall.EXDEV, "EXDEV"},
		{syscall.EPERM, "EPERM"},
		{syscall.EACCES, "EACCES"},
		{syscall.EAGAIN, "EAGAIN"},
		{syscall.ENODEV, "ENODEV"},
		{syscall.ENOMEM, "ENOMEM"},
		{fs.ErrExist, "exist"},
		{fs.ErrNotExist, "notexist"},
	} {
		if errors.Is(err, e.target) {
			return e.name
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return "other(" + pe.Err.Error() + ")"
	}
	return "other(" + err.Error() + ")"
}
