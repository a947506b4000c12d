package disk

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// model is a reference for one content version, as simple as can be: its
// size and a map from page index to the page's bytes, holding exactly the
// pages a write has touched since a truncate last dropped them.
type model struct {
	size  int64
	pages map[int64][]byte
}

func newModel() model { return model{pages: map[int64][]byte{}} }

func (m *model) write(p []byte, off int64) {
	for k, b := range p {
		pos := off + int64(k)
		pg := m.pages[pos/PageSize]
		if pg == nil {
			pg = make([]byte, PageSize)
			m.pages[pos/PageSize] = pg
		}
		pg[pos%PageSize] = b
	}
	m.size = max(m.size, off+int64(len(p)))
}

func (m *model) truncate(size int64) {
	for _, i := range slices.Sorted(maps.Keys(m.pages)) {
		switch {
		case i*PageSize >= size:
			delete(m.pages, i)
		case (i+1)*PageSize > size:
			clear(m.pages[i][size-i*PageSize:])
		}
	}
	m.size = size
}

func (m *model) clone() model {
	c := model{size: m.size, pages: map[int64][]byte{}}
	for i, b := range m.pages {
		c.pages[i] = slices.Clone(b)
	}
	return c
}

// read returns the n bytes at off, holes as zeros, cut at size.
func (m *model) read(off int64, n int) []byte {
	n = int(max(0, min(int64(n), m.size-off)))
	out := make([]byte, n)
	for k := 0; k < n; {
		pos := off + int64(k)
		in := pos % PageSize
		end := min(n, k+int(PageSize-in))
		if pg := m.pages[pos/PageSize]; pg != nil {
			copy(out[k:end], pg[in:])
		}
		k = end
	}
	return out
}

// check compares c with m: size, allocated pages, the bytes of every page m
// holds and of windows at the given offsets (holes read as zeros there).
func check(c *content, m *model, windows ...int64) error {
	if c.size != m.size {
		return fmt.Errorf("size %d, want %d", c.size, m.size)
	}
	if c.pages() != int64(len(m.pages)) {
		return fmt.Errorf("%d pages allocated, want %d", c.pages(), len(m.pages))
	}
	for _, i := range slices.Sorted(maps.Keys(m.pages)) {
		windows = append(windows, i*PageSize)
	}
	for _, off := range windows {
		want := m.read(off, 2*PageSize)
		got := make([]byte, 2*PageSize)
		if n := c.readAt(got, off); n != len(want) || !bytes.Equal(got[:n], want) {
			return fmt.Errorf("read at %d differs (%d bytes, want %d)", off, n, len(want))
		}
	}
	return nil
}

// checkRefs recounts every node's references from the given versions and
// from parent nodes, and each interior node's pages, against what the nodes
// say. An under-counted node could be written while another version holds
// it.
func checkRefs(t *testing.T, versions ...*content) {
	t.Helper()
	refs := map[*node]int32{}
	var walk func(n *node, h int) int64
	walk = func(n *node, h int) int64 {
		refs[n]++
		if refs[n] > 1 {
			return n.pages // counted on its first visit
		}
		if h == 0 {
			if n.kids != nil || len(n.data) != PageSize || n.pages != 1 {
				t.Fatalf("malformed leaf: kids=%v len=%d pages=%d", n.kids != nil, len(n.data), n.pages)
			}
			return 1
		}
		var sum int64
		for _, k := range n.kids {
			if k != nil {
				sum += walk(k, h-1)
			}
		}
		if sum != n.pages || sum == 0 {
			t.Fatalf("interior node at level %d says %d pages, holds %d", h, n.pages, sum)
		}
		return sum
	}
	for _, c := range versions {
		if c.root != nil {
			walk(c.root, c.height)
		}
	}
	for n, r := range refs {
		if n.refs != r {
			t.Fatalf("node refs %d, %d holders", n.refs, r)
		}
	}
}

// TestContentModel drives two versions of a content, cloned from each other
// now and then like a file's volatile and durable copies, with random writes
// and truncates over offsets that span several tree levels, and compares
// both with dense models after every step.
func TestContentModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rng(seed)
		var cs [2]content
		ms := [2]model{newModel(), newModel()}
		off := func() int64 {
			switch r.IntN(4) {
			case 0:
				return int64(r.IntN(3 * PageSize))
			case 1:
				return int64(r.IntN(fanout+3)) * PageSize
			case 2:
				return int64(r.IntN(2*fanout*fanout)) * PageSize
			default:
				return int64(r.IntN(1 << 20))
			}
		}
		for step := range 200 {
			i := r.IntN(2)
			c, m := &cs[i], &ms[i]
			what := ""
			switch r.IntN(6) {
			case 0, 1, 2:
				p := make([]byte, r.IntN(3*PageSize))
				for j := range p {
					p[j] = byte(r.IntN(255) + 1)
				}
				o := off()
				what = fmt.Sprintf("write %d@%d", len(p), o)
				c.writeAt(p, o)
				m.write(p, o)
			case 3:
				s := off()
				if r.IntN(2) == 0 {
					s = int64(r.IntN(int(c.size) + 1))
				}
				what = fmt.Sprintf("truncate %d", s)
				c.truncate(s)
				m.truncate(s)
			case 4:
				what = "clone"
				o := &cs[1-i]
				o.release()
				*o = c.clone()
				ms[1-i] = m.clone()
			case 5:
				if r.IntN(4) == 0 {
					what = "release"
					c.release()
					*m = newModel()
				}
			}
			windows := []int64{0, off(), off(), max(0, cs[0].size-5)}
			for j := range cs {
				if err := check(&cs[j], &ms[j], windows...); err != nil {
					t.Fatalf("seed %d step %d (%s on version %d): version %d: %v", seed, step, what, i, j, err)
				}
			}
			checkRefs(t, &cs[0], &cs[1])
		}
	}
}

// TestContentSharing: a clone shares pages rather than copying them, and a
// write through either version copies only what it touches. The negative
// control writes into a shared page without copying it, as a broken
// copy-on-write would, and the model check must catch it.
func TestContentSharing(t *testing.T) {
	var vol content
	vol.writeAt(bytes.Repeat([]byte("a"), 3*PageSize), 0)
	vol.writeAt([]byte("z"), 40*PageSize)
	dur := vol.clone()
	mv := newModel()
	mv.write(bytes.Repeat([]byte("a"), 3*PageSize), 0)
	mv.write([]byte("z"), 40*PageSize)
	md := mv.clone()
	if vol.root != dur.root || vol.root.refs != 2 {
		t.Fatal("clone copied the root instead of sharing it")
	}
	vol.writeAt([]byte("b"), PageSize+5)
	mv.write([]byte("b"), PageSize+5)
	if vol.root == dur.root {
		t.Fatal("a write to a shared tree did not copy its root")
	}
	if &vol.leaf(0)[0] != &dur.leaf(0)[0] || &vol.leaf(40)[0] != &dur.leaf(40)[0] {
		t.Fatal("pages the write did not touch are no longer shared")
	}
	if &vol.leaf(1)[0] == &dur.leaf(1)[0] {
		t.Fatal("the written page is still shared")
	}
	for _, tc := range []struct {
		c *content
		m *model
	}{{&vol, &mv}, {&dur, &md}} {
		if err := check(tc.c, tc.m); err != nil {
			t.Fatal(err)
		}
	}
	checkRefs(t, &vol, &dur)

	// Negative control: mutate page 0 through the durable version without
	// copy on write. The volatile version sees it, and check reports it.
	dur.leaf(0)[7] = 'X'
	if err := check(&vol, &mv); err == nil {
		t.Fatal("a shared page written through the durable copy went unnoticed")
	}
}

// TestPreallocate: growing a file by truncate, as etcd preallocates its WAL,
// allocates nothing on either copy and survives sync and crash as a hole.
func TestPreallocate(t *testing.T) {
	f := New(Options{MaxBytes: 1 << 20})
	ino := create(t, f, "/wal", false)
	must(t, f.Truncate(ino, 64<<20))
	must(t, f.Sync(ino, true, false))
	if f.Used() != 0 {
		t.Fatalf("Used %d after preallocating", f.Used())
	}
	if _, err := f.WriteAt(ino, []byte("rec"), 32<<20); err != nil {
		t.Fatal(err)
	}
	if want := int64(PageSize + 3); f.Used() != want {
		t.Fatalf("Used %d after one write, want %d", f.Used(), want)
	}
	must(t, f.Sync(ino, true, false))
	f.Crash(rng(1), true)
	in := f.inodes[ino]
	if in.data.root != in.durable.root {
		t.Fatal("after a crash the volatile copy does not share the durable tree")
	}
	if in.data.size != 64<<20 || in.data.pages() != 1 || f.Used() != PageSize {
		t.Fatalf("after crash: size %d, %d pages, Used %d", in.data.size, in.data.pages(), f.Used())
	}
	buf := make([]byte, 8)
	if n, _ := f.ReadAt(ino, buf, 32<<20-4); n != 8 || string(buf) != "\x00\x00\x00\x00rec\x00" {
		t.Fatalf("read %q", buf[:n])
	}
	// Shrinking keeps the written page only if it is below the new size,
	// and the bytes past the size come back as zeros when it grows again.
	must(t, f.Truncate(ino, 32<<20+1))
	must(t, f.Truncate(ino, 64<<20))
	if n, _ := f.ReadAt(ino, buf, 32<<20-4); n != 8 || string(buf) != "\x00\x00\x00\x00r\x00\x00\x00" {
		t.Fatalf("read after shrink and grow %q", buf[:n])
	}
	if got := f.DumpDurable(); !bytes.Contains([]byte(got), []byte("/wal size=67108864")) {
		t.Fatalf("durable:\n%s", got)
	}
	checkInvariants(t, f)
}

// BenchmarkPreallocateSyncCrash is etcd's WAL life cycle: preallocate a
// 64 MiB segment, append and sync a few records, crash.
func BenchmarkPreallocateSyncCrash(b *testing.B) {
	f := New(Options{})
	rec := bytes.Repeat([]byte("r"), 100)
	r := rng(1)
	for b.Loop() {
		ino, err := f.Create("/wal", false)
		if err != nil {
			b.Fatal(err)
		}
		must(b, f.Truncate(ino, 64<<20))
		for i := range 100 {
			if _, err := f.WriteAt(ino, rec, int64(i*len(rec))); err != nil {
				b.Fatal(err)
			}
			must(b, f.Sync(ino, true, false))
		}
		f.Crash(r, true)
		must(b, f.Unlink("/wal"))
	}
}
