package disk

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Dump renders the volatile tree, one line per path in depth-first order with
// names sorted, then unlinked inodes still held open, by Ino:
//
//	/ dir
//	/data dir
//	/data/kv.log size=12 sha=5e1c… head="hello world\n"
//	(unlinked ino 7) size=3 sha=… head="abc"
//
// It is deterministic and meant for tests and traces.
func (f *FS) Dump() string {
	return f.dump(false)
}

// DumpDurable renders the durable tree and contents in the same format: what
// a crash would leave if every pending operation were lost.
func (f *FS) DumpDurable() string {
	return f.dump(true)
}

func (f *FS) dump(durable bool) string {
	var b strings.Builder
	seen := map[Ino]bool{}
	var walk func(path string, in *inode)
	walk = func(path string, in *inode) {
		seen[in.ino] = true
		if in.dir {
			fmt.Fprintf(&b, "%s dir\n", path)
			ents := in.entries
			if durable {
				ents = in.dentries
			}
			prefix := path
			if prefix != "/" {
				prefix += "/"
			}
			for _, name := range slices.Sorted(maps.Keys(ents)) {
				c := f.inodes[ents[name]]
				if c.dir && seen[c.ino] {
					fmt.Fprintf(&b, "%s%s dir (loop to ino %d)\n", prefix, name, c.ino)
					continue
				}
				walk(prefix+name, c)
			}
			return
		}
		fmt.Fprintf(&b, "%s %s\n", path, describe(in, durable))
	}
	walk("/", f.inodes[RootIno])
	if !durable {
		for _, ino := range slices.Sorted(maps.Keys(f.inodes)) {
			if in := f.inodes[ino]; !seen[ino] && in.nlink == 0 {
				kind := "dir"
				if !in.dir {
					kind = describe(in, false)
				}
				fmt.Fprintf(&b, "(unlinked ino %d) %s\n", ino, kind)
			}
		}
	}
	return b.String()
}

func describe(in *inode, durable bool) string {
	c := &in.data
	if durable {
		c = &in.durable
	}
	h := sha256.New()
	var zeros [PageSize]byte
	c.each(func(page []byte, n int) {
		if page == nil {
			page = zeros[:]
		}
		h.Write(page[:n])
	})
	head := make([]byte, min(c.size, 16))
	c.readAt(head, 0)
	return fmt.Sprintf("size=%d sha=%x head=%q", c.size, h.Sum(nil)[:6], head)
}
