package disk

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
)

// The durable image hash (DurableImage) identifies what a crash left on the disk: the
// probe of systematic crash states (engine/crashstates.go) takes it for every candidate
// state at every disk op, on copies that share almost all their pages. It is a Merkle
// hash: every node of a content tree caches the sum of its subtree, so an image costs a
// walk of the inodes plus the pages written since their sums were last taken, not a
// read of every byte (a 64 MB preallocated WAL segment costs a few sums, not 64 MB of
// hashing per state).

// zeroSum is the sum of a subtree that reads as zeros: a hole, a page of explicit zeros
// or any subtree of them, so that two versions that read the same hash the same however
// their zeros are stored.
var zeroSum [32]byte

var zeroPage [PageSize]byte

// pageSum is the sum of a leaf page that is not all zeros. It is a variable so that a
// test can break it (a sum that ignores the bytes) and show the image test catches it.
var pageSum = func(page []byte) (s [32]byte) {
	h := sha256.New()
	h.Write([]byte{'p'})
	h.Write(page)
	h.Sum(s[:0])
	return s
}

// sum returns the sum of subtree n at level h (0: a leaf), caching it in n:
//
//   - zeroSum when the subtree reads as zeros;
//   - when only its first child holds non-zero bytes, that child's sum, so that a tree
//     grown taller (the height only grows) hashes like one that never grew;
//   - else sha256 of the level and the children's sums (a leaf: pageSum of its bytes).
//
// Two subtrees that read the same therefore have the same sum, and the sum names the
// level at which the non-zero bytes start to spread, so two that read differently do
// not (up to a sha256 collision).
func sum(n *node, h int) [32]byte {
	if n == nil {
		return zeroSum
	}
	if n.summed {
		return n.sum
	}
	var s [32]byte
	if h == 0 {
		if !bytes.Equal(n.data, zeroPage[:]) {
			s = pageSum(n.data)
		}
	} else {
		var kids [fanout][32]byte
		nonzero := 0
		for i, k := range n.kids {
			if kids[i] = sum(k, h-1); kids[i] != zeroSum {
				nonzero++
			}
		}
		switch {
		case nonzero == 0:
		case nonzero == 1 && kids[0] != zeroSum:
			s = kids[0]
		default:
			d := sha256.New()
			d.Write([]byte{'n', byte(h)})
			for i := range kids {
				d.Write(kids[i][:])
			}
			d.Sum(s[:0])
		}
	}
	n.sum, n.summed = s, true
	return s
}

// sum is the content's hash: its bytes, not its size (no byte at or past size is
// non-zero, content's invariant, so size and sum together say what reads return).
func (c *content) sum() [32]byte { return sum(c.root, c.height) }

// DurableImage is a hash of the durable tree and contents: two filesystems have the
// same image exactly when DumpDurable renders them the same (paths, kinds, sizes and
// bytes; not inode numbers, link identity or times), up to a hash collision. Two
// crash states with the same image restart on the same disk.
func (f *FS) DurableImage() string {
	h := sha256.New()
	var rec []byte
	line := func(path string, kind byte, n uint64, s *[32]byte) {
		rec = binary.AppendUvarint(rec[:0], uint64(len(path)))
		rec = append(rec, path...)
		rec = append(rec, kind)
		rec = binary.AppendUvarint(rec, n)
		if s != nil {
			rec = append(rec, s[:]...)
		}
		h.Write(rec)
	}
	// The walk is dump's (dump.go), line for line.
	seen := map[Ino]bool{}
	var walk func(path string, in *inode)
	walk = func(path string, in *inode) {
		seen[in.ino] = true
		if !in.dir {
			s := in.durable.sum()
			line(path, 'f', uint64(in.durable.size), &s)
			return
		}
		line(path, 'd', 0, nil)
		prefix := path
		if prefix != "/" {
			prefix += "/"
		}
		for _, name := range slices.Sorted(maps.Keys(in.dentries)) {
			c := f.inodes[in.dentries[name]]
			if c.dir && seen[c.ino] {
				line(prefix+name, 'l', uint64(c.ino), nil)
				continue
			}
			walk(prefix+name, c)
		}
	}
	walk("/", f.inodes[RootIno])
	return hex.EncodeToString(h.Sum(nil)[:8])
}
