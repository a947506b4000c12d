package disk

// PageSize is the unit in which file content is stored and counted against
// Options.MaxBytes, like a filesystem block: a page is allocated when a
// write first touches it, and never by a truncate that grows the file.
const PageSize = 4096

const (
	pageShift = 12 // log2(PageSize)
	fanBits   = 6
	fanout    = 1 << fanBits
)

// content is one version of a file's bytes: its size and a persistent radix
// tree of PageSize pages. A page or subtree that was never written is nil and
// reads as zeros, so a file preallocated by a truncate costs nothing until it
// is written.
//
// Versions share nodes: clone is O(1) and takes a reference to the root; a
// write copies only the nodes on its path that another version still holds
// (refs > 1), so the volatile and durable copies of a file share every page
// neither has changed since they were last equal.
//
// Invariants: no byte at or past size is non-zero (a shrinking truncate
// clears the tail of the last page and drops the pages past it), so a
// growing truncate only sets size; a node's refs counts the content values
// and parent nodes holding it, and a node with refs > 1 is never written;
// pages is the number of leaves under a node.
//
// A content value owns one reference to its root: copy it only with clone,
// and release the old value when overwriting it.
type content struct {
	size int64
	// height is the number of interior levels above the leaves: the root
	// covers fanout^height pages. It only grows.
	height int
	root   *node
}

// node is a leaf (data holds PageSize bytes) or an interior node (kids).
type node struct {
	refs  int32
	pages int64 // leaves in this subtree
	kids  *[fanout]*node
	data  []byte
	// sum caches the subtree's content hash (image.go) when summed is set. A node
	// is written only while it is private (refs 1), and every write clears summed
	// on the nodes it passes, so a shared node's sum stays valid for every
	// version holding it.
	sum    [32]byte
	summed bool
}

func newNode(leaf bool) *node {
	if leaf {
		return &node{refs: 1, pages: 1, data: make([]byte, PageSize)}
	}
	return &node{refs: 1, kids: new([fanout]*node)}
}

// copyNode returns a private copy of n (refs 1) that shares n's children.
func copyNode(n *node) *node {
	c := &node{refs: 1, pages: n.pages}
	if n.kids == nil {
		c.data = make([]byte, PageSize)
		copy(c.data, n.data)
		return c
	}
	c.kids = new([fanout]*node)
	*c.kids = *n.kids
	for _, k := range c.kids {
		if k != nil {
			k.refs++
		}
	}
	return c
}

// unref drops one reference to n, and its references to its children once
// no one holds it.
func unref(n *node) {
	if n == nil {
		return
	}
	if n.refs--; n.refs > 0 || n.kids == nil {
		return
	}
	for _, k := range n.kids {
		unref(k)
	}
}

// clone returns a version equal to c that shares all its pages.
func (c *content) clone() content {
	if c.root != nil {
		c.root.refs++
	}
	return *c
}

// release drops c's pages and leaves it empty.
func (c *content) release() {
	unref(c.root)
	*c = content{}
}

// pages reports how many pages are allocated.
func (c *content) pages() int64 {
	if c.root == nil {
		return 0
	}
	return c.root.pages
}

// span is the number of pages under one node at level h (0 = leaf).
func span(h int) int64 { return 1 << (fanBits * h) }

// leaf returns page i for reading, nil for a hole.
func (c *content) leaf(i int64) []byte {
	if c.root == nil || i < 0 || i >= span(c.height) {
		return nil
	}
	n := c.root
	for h := c.height; h > 0; h-- {
		n = n.kids[(i>>(fanBits*(h-1)))&(fanout-1)]
		if n == nil {
			return nil
		}
	}
	return n.data
}

// writable returns page i for writing, allocating it or copying the nodes on
// its path that are shared.
func (c *content) writable(i int64) []byte {
	for i >= span(c.height) {
		if c.root != nil {
			r := newNode(false)
			r.kids[0], r.pages = c.root, c.root.pages
			c.root = r
		}
		c.height++
	}
	var path [16]*node
	p := &c.root
	for h := c.height; ; h-- {
		n := *p
		switch {
		case n == nil:
			n = newNode(h == 0)
			n.pages = 0
			*p = n
		case n.refs > 1:
			n.refs--
			n = copyNode(n)
			*p = n
		}
		n.summed = false
		path[h] = n
		if h == 0 {
			if n.pages == 0 {
				// A new leaf: count it in every node above it.
				for l := 0; l <= c.height; l++ {
					path[l].pages++
				}
			}
			return n.data
		}
		p = &n.kids[(i>>(fanBits*(h-1)))&(fanout-1)]
	}
}

// readAt copies the bytes at off into p, stopping at size, and returns how
// many it copied. Holes read as zeros.
func (c *content) readAt(p []byte, off int64) int {
	if off >= c.size {
		return 0
	}
	p = p[:min(int64(len(p)), c.size-off)]
	for done := 0; done < len(p); {
		pos := off + int64(done)
		in := int(pos & (PageSize - 1))
		dst := p[done:min(len(p), done+PageSize-in)]
		if src := c.leaf(pos >> pageShift); src != nil {
			copy(dst, src[in:])
		} else {
			clear(dst)
		}
		done += len(dst)
	}
	return len(p)
}

// writeAt writes p at off, extending size if it ends past it; a gap between
// the old size and off reads as zeros.
func (c *content) writeAt(p []byte, off int64) {
	if len(p) == 0 {
		return
	}
	for done := 0; done < len(p); {
		pos := off + int64(done)
		in := int(pos & (PageSize - 1))
		done += copy(c.writable(pos >> pageShift)[in:], p[done:])
	}
	c.size = max(c.size, off+int64(len(p)))
}

// newPages counts the pages a write of n bytes at off would allocate.
func (c *content) newPages(off int64, n int) int64 {
	if n <= 0 {
		return 0
	}
	var k int64
	for i := off >> pageShift; i <= (off+int64(n)-1)>>pageShift; i++ {
		if c.leaf(i) == nil {
			k++
		}
	}
	return k
}

// truncate sets the size. Growing allocates nothing; shrinking clears the
// tail of the new last page and drops the pages past it, so it costs the
// pages it frees, not the file's size.
func (c *content) truncate(size int64) {
	if size < c.size {
		if in := size & (PageSize - 1); in != 0 && c.leaf(size>>pageShift) != nil {
			clear(c.writable(size >> pageShift)[in:])
		}
		c.dropFrom((size + PageSize - 1) >> pageShift)
	}
	c.size = size
}

// dropFrom removes every page with index >= first.
func (c *content) dropFrom(first int64) {
	if c.root == nil || first >= span(c.height) {
		return
	}
	if first == 0 {
		unref(c.root)
		c.root = nil
		return
	}
	c.root = cut(c.root, c.height, first)
}

// cut removes the pages >= first (relative to n's first page) from the
// subtree n at level h > 0, copying n if it is shared, and returns the new
// subtree (nil once empty).
func cut(n *node, h int, first int64) *node {
	if n.refs > 1 {
		n.refs--
		n = copyNode(n)
	}
	n.summed = false
	w := span(h - 1)
	k := first / w
	if rem := first % w; rem != 0 {
		if kid := n.kids[k]; kid != nil {
			before := kid.pages
			kid = cut(kid, h-1, rem)
			n.kids[k] = kid
			n.pages -= before
			if kid != nil {
				n.pages += kid.pages
			}
		}
		k++
	}
	for ; k < fanout; k++ {
		if kid := n.kids[k]; kid != nil {
			n.pages -= kid.pages
			unref(kid)
			n.kids[k] = nil
		}
	}
	if n.pages == 0 {
		unref(n)
		return nil
	}
	return n
}

// each calls fn with every page-sized run of the content in order, nil for
// a hole, each slice cut to size.
func (c *content) each(fn func(page []byte, n int)) {
	for i := int64(0); i<<pageShift < c.size; i++ {
		fn(c.leaf(i), int(min(PageSize, c.size-i<<pageShift)))
	}
}
