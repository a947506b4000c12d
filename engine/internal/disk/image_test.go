package disk

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// imageWorld drives random operations on a few filesystems (the first, and clones
// of it taken along the way) and collects their durable dumps and images.
type imageWorld struct {
	r    *rand.Rand
	fss  []*FS
	seen map[string]string // DumpDurable -> DurableImage
	imgs map[string]string // DurableImage -> DumpDurable
}

var imagePaths = []string{"/a", "/b", "/d/a", "/d/c", "/e/a"}

// data is a short run of bytes, often all zeros (overwriting a hole or data with
// zeros), sometimes spanning pages, at a page-aligned or arbitrary offset.
func (w *imageWorld) data() ([]byte, int64) {
	n := 1 + w.r.IntN(3*PageSize)
	p := make([]byte, n)
	switch w.r.IntN(3) {
	case 0: // zeros
	case 1:
		for i := range p {
			p[i] = "ab"[w.r.IntN(2)]
		}
	default:
		p[w.r.IntN(n)] = 'x'
	}
	off := int64(w.r.IntN(6)) * PageSize
	if w.r.IntN(2) == 0 {
		off += int64(w.r.IntN(PageSize))
	}
	if w.r.IntN(8) == 0 {
		off += 70 * PageSize // past the first interior node: a taller tree
	}
	return p, off
}

// step applies one random operation to f; errors (ENOENT and the like) are fine.
func (w *imageWorld) step(f *FS) {
	path := imagePaths[w.r.IntN(len(imagePaths))]
	ino, err := f.Lookup(path)
	switch k := w.r.IntN(14); {
	case k < 2:
		f.Create("/d", true)
		f.Create("/e", true)
		f.Create(path, false)
	case k < 6 && err == nil:
		p, off := w.data()
		f.WriteAt(ino, p, off)
	case k < 8 && err == nil:
		// Truncates that extend (a hole) and that shrink mid-page.
		f.Truncate(ino, int64(w.r.IntN(8*PageSize)))
	case k < 10 && err == nil:
		f.Sync(ino, false, false)
	case k == 10:
		for _, d := range []string{"/", "/d", "/e"} {
			if di, err := f.Lookup(d); err == nil {
				f.Sync(di, false, false)
			}
		}
	case k == 11:
		f.Rename(path, imagePaths[w.r.IntN(len(imagePaths))])
	case k == 12:
		f.Unlink(path)
	default:
		if w.r.IntN(3) == 0 {
			f.Crash(w.r, true)
		} else if len(w.fss) < 4 {
			w.fss = append(w.fss, f.Clone())
		}
	}
}

// record checks f's image against every image seen so far: equal exactly when the
// dumps are equal.
func (w *imageWorld) record(f *FS) (string, error) {
	dump, img := f.DumpDurable(), f.DurableImage()
	if prev, ok := w.seen[dump]; ok && prev != img {
		return "", fmt.Errorf("one durable dump, two images %s and %s:\n%s", prev, img, dump)
	}
	if prev, ok := w.imgs[img]; ok && prev != dump {
		return "", fmt.Errorf("image %s for two dumps:\n%s---\n%s", img, prev, dump)
	}
	w.seen[dump], w.imgs[img] = img, dump
	return dump, nil
}

// twin builds, on a fresh filesystem, the durable tree of f with every byte written
// explicitly (zeros included, no holes, trees only as tall as they need): the same
// reads from different storage, so it must have f's image.
func twin(t testing.TB, f *FS) *FS {
	g := New(Options{})
	var walk func(path string, in *inode)
	walk = func(path string, in *inode) {
		if in.dir {
			if path != "/" {
				create(t, g, path, true)
			}
			prefix := strings.TrimSuffix(path, "/") + "/"
			for name, c := range in.dentries {
				walk(prefix+name, f.inodes[c])
			}
			return
		}
		ino := create(t, g, path, false)
		buf := make([]byte, in.durable.size)
		in.durable.readAt(buf, 0)
		if _, err := g.WriteAt(ino, buf, 0); err != nil {
			t.Fatal(err)
		}
		must(t, g.Sync(ino, false, false))
	}
	walk("/", f.inodes[RootIno])
	return g
}

// checkImages runs steps random operations of seed and checks every image.
func checkImages(t testing.TB, seed uint64, steps int, opts Options) error {
	w := &imageWorld{r: rng(seed), seen: map[string]string{}, imgs: map[string]string{}}
	w.fss = []*FS{New(opts)}
	for i := range steps {
		f := w.fss[w.r.IntN(len(w.fss))]
		w.step(f)
		dump, err := w.record(f)
		if err != nil {
			return err
		}
		if i%4 == 0 && !strings.Contains(dump, "loop to ino") {
			if _, err := w.record(twin(t, f)); err != nil {
				return fmt.Errorf("the twin with explicit bytes: %w", err)
			}
		}
	}
	if len(w.seen) < 10 {
		return fmt.Errorf("only %d distinct durable dumps in %d steps: the test does not vary the disk", len(w.seen), steps)
	}
	return nil
}

// TestDurableImageMatchesDump: the image hash (Merkle sums cached in the content trees) is equal
// for two disks exactly when their durable dumps are, over random writes (zeros over
// holes and over data, pages far apart), truncates that extend and shrink, renames,
// unlinks, syncs, crashes and clones, and for a twin of each disk that stores the same
// bytes without holes.
func TestDurableImageMatchesDump(t *testing.T) {
	for _, opts := range []Options{{}, {StrictDirs: true, TearUnit: 512}} {
		for seed := range uint64(8) {
			if err := checkImages(t, seed, 200, opts); err != nil {
				t.Fatalf("strict=%v seed %d: %v", opts.StrictDirs, seed, err)
			}
		}
	}
}

// TestDurableImageNegativeControl: an image whose page sums ignore the bytes (any
// non-zero page sums alike) fails TestDurableImageMatchesDump's check.
func TestDurableImageNegativeControl(t *testing.T) {
	good := pageSum
	defer func() { pageSum = good }()
	pageSum = func(page []byte) [32]byte { return good(nil) }
	caught := 0
	for seed := range uint64(12) {
		if err := checkImages(t, seed, 200, Options{}); err != nil {
			caught++
			break
		}
	}
	if caught == 0 {
		t.Fatal("an image that ignores page contents passed every seed")
	}
}

// TestDurableImageHoles: a hole, a page of written zeros and a tree grown taller and
// shrunk back all hash as the zeros they read.
func TestDurableImageHoles(t *testing.T) {
	img := func(build func(f *FS, ino Ino)) string {
		f := New(Options{})
		ino := create(t, f, "/f", false)
		build(f, ino)
		must(t, f.Sync(ino, false, false))
		return f.DurableImage()
	}
	ref := img(func(f *FS, ino Ino) {
		f.Truncate(ino, 3*PageSize)
		f.WriteAt(ino, []byte("x"), PageSize)
	})
	for name, build := range map[string]func(f *FS, ino Ino){
		"explicit zeros": func(f *FS, ino Ino) {
			f.WriteAt(ino, make([]byte, 3*PageSize), 0)
			f.WriteAt(ino, []byte("x"), PageSize)
		},
		"grown and shrunk": func(f *FS, ino Ino) {
			f.WriteAt(ino, []byte("y"), 5000*PageSize)
			f.WriteAt(ino, []byte("x"), PageSize)
			f.Truncate(ino, 3*PageSize)
		},
		"data zeroed": func(f *FS, ino Ino) {
			f.Truncate(ino, 3*PageSize)
			f.WriteAt(ino, []byte("zzz"), 2*PageSize+7)
			f.WriteAt(ino, make([]byte, 3), 2*PageSize+7)
			f.WriteAt(ino, []byte("x"), PageSize)
		},
	} {
		if got := img(build); got != ref {
			t.Errorf("%s: image %s, want %s (a hole)", name, got, ref)
		}
	}
	if img(func(f *FS, ino Ino) { f.Truncate(ino, 3*PageSize); f.WriteAt(ino, []byte("x"), 0) }) == ref {
		t.Error("the byte moved to another page, the image did not change")
	}
	if img(func(f *FS, ino Ino) { f.Truncate(ino, 3*PageSize+1); f.WriteAt(ino, []byte("x"), PageSize) }) == ref {
		t.Error("the size changed, the image did not")
	}
}
