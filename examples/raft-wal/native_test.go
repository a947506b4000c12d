package raftwal_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 36 natively, on this machine's file system, without seedfall: raft-wal v0.4.2
// itself, 16 KiB segments, entries appended one at a time until the first segment
// seals. A file system wrapper copies the WAL directory at every fsync of a segment, so
// the copy taken at the fsync of the append that sealed segment 1 is what a power loss
// right after that fsync leaves: every byte synced, the rotation (its metadata commit and
// segment 2) not yet done. Opened again, that WAL refuses every append with "segment is
// sealed", for good. The same copy with the seal's last bytes cut at the segment's
// preallocated size, which a power loss inside the write can leave (the write extends
// the file past its preallocated end, and the extension and its commit frame are what
// did not reach the disk), fails the same way: the recovery drops the uncommitted seal's
// entries but keeps its index offset.
func TestNativeSealedTailRefusesAppends(t *testing.T) {
	const segSize = 16 << 10
	dir := t.TempDir()
	rec := &syncCopies{FS: fs.New(), dir: dir, to: t.TempDir()}
	w, err := wal.Open(dir, wal.WithSegmentSize(segSize), wal.WithSegmentFiler(segment.NewFiler(dir, rec)))
	if err != nil {
		t.Fatal(err)
	}
	var next uint64 = 1
	for ; segments(t, dir) < 2 && next < 10000; next++ {
		if err := w.StoreLog(&raft.Log{Index: next, Term: 1, Data: []byte(fmt.Sprintf("PUT k%d v%d", next%7, next))}); err != nil {
			t.Fatalf("append %d: %v", next, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if segments(t, dir) < 2 {
		t.Fatalf("no rotation after %d appends", next-1)
	}
	// The last copy with only segment 1 is the one taken at the sealing append's fsync.
	sealed := ""
	for _, c := range rec.copies {
		if segments(t, c) == 1 {
			sealed = c
		}
	}
	if sealed == "" {
		t.Fatal("no copy taken before the rotation")
	}
	seg1, err := filepath.Glob(filepath.Join(sealed, "00000000000000000001-*.wal"))
	if err != nil || len(seg1) != 1 {
		t.Fatalf("segment 1 in %s: %v %v", sealed, seg1, err)
	}
	st, err := os.Stat(seg1[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() <= segSize {
		t.Fatalf("segment 1 is %d bytes at the sealing fsync, want the seal past its preallocated %d", st.Size(), segSize)
	}

	torn := t.TempDir()
	copyDir(t, sealed, torn)
	if err := os.Truncate(filepath.Join(torn, filepath.Base(seg1[0])), segSize); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, dir string }{
		{"power loss after the sealing fsync, before the rotation", sealed},
		{"power loss inside the sealing write: its extension past the preallocated size lost", torn},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := wal.Open(c.dir, wal.WithSegmentSize(segSize))
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer w.Close()
			last, err := w.LastIndex()
			if err != nil {
				t.Fatal(err)
			}
			// Appends go on failing: nothing but an append ever rotates, and every
			// append to the sealed tail fails before that check.
			for try := 1; try <= 3; try++ {
				err := w.StoreLog(&raft.Log{Index: last + 1, Term: 2, Data: []byte("PUT k0 after")})
				if !errors.Is(err, types.ErrSealed) {
					t.Fatalf("append of %d after the restart, try %d: %v, want %v (the bug; if this fails with nil, raft-wal recovers a sealed tail now)", last+1, try, err, types.ErrSealed)
				}
			}
		})
	}
}

// syncCopies is raft-wal's own file system, copying the WAL directory to a new
// directory under to at every fsync of a segment file.
type syncCopies struct {
	*fs.FS
	dir, to string
	mu      sync.Mutex
	copies  []string
}

func (s *syncCopies) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := s.FS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return &copyOnSync{WritableFile: f, s: s}, nil
}

func (s *syncCopies) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := s.FS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return &copyOnSync{WritableFile: f, s: s}, nil
}

type copyOnSync struct {
	types.WritableFile
	s *syncCopies
}

func (f *copyOnSync) Sync() error {
	if err := f.WritableFile.Sync(); err != nil {
		return err
	}
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	to := filepath.Join(f.s.to, fmt.Sprint(len(f.s.copies)))
	if err := os.Mkdir(to, 0o755); err != nil {
		return err
	}
	if err := copyFiles(f.s.dir, to); err != nil {
		return err
	}
	f.s.copies = append(f.s.copies, to)
	return nil
}

// segments counts the segment files in dir.
func segments(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := copyFiles(from, to); err != nil {
		t.Fatal(err)
	}
}

// copyFiles copies the regular files of from (wal-meta.db and the segments) into to.
func copyFiles(from, to string) error {
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// The hashicorp/raft finding natively, on the host, without seedfall (README, "Finding
// 39"): native/bootstrap-crash runs a one-server raft v1.7.2 on raft-wal in a child
// process, kills it (SIGKILL) at the start of each durable write of its first start, and
// starts it again over the same directory. Killed between BootstrapCluster's two writes
// (CurrentTerm 1 written, the configuration entry not), the server restarts with a term
// and no configuration, every BootstrapCluster returns ErrCantBootstrap, and no leader is
// elected; every other crash point recovers. Built against the patched raft (through
// examples/nativerun), the entry is written first and every crash point recovers.
func TestNativeBootstrapCrash(t *testing.T) {
	out := exampletest.Native(t, "./native/bootstrap-crash")
	exampletest.WantLines(t, out,
		"write #2 stable.SetUint64(CurrentTerm, 1)\n   write #3 logs.StoreLogs({index 1 term 1 LogConfiguration})",
		"== first start killed at write #3 logs.StoreLogs({index 1 term 1 LogConfiguration}): SIGKILL before it\n"+
			"   restart (BootstrapCluster again, wait 5s for a leader):\n"+
			"     on disk at start: CurrentTerm 1, LastIndex 0\n"+
			"     log: [INFO]  raft: initial configuration: index=0 servers=[]\n"+
			"     BootstrapCluster: bootstrap only works on new clusters\n"+
			"     log: [WARN]  raft: no known peers, aborting election\n"+
			`     bootstrap="bootstrap only works on new clusters" state=Follower term=1 last_log_index=0 latest_configuration=[] -> NO LEADER`,
		"1 of 6 crash points leave a server that elects no leader within 5s")
	out = exampletest.Native(t, "./native/bootstrap-crash", "patches/fix-bootstrap-order.patch")
	exampletest.WantLines(t, out,
		"write #2 logs.StoreLogs({index 1 term 1 LogConfiguration})\n   write #3 stable.SetUint64(CurrentTerm, 1)",
		"== first start killed at write #3 stable.SetUint64(CurrentTerm, 1): SIGKILL before it\n"+
			"   restart (BootstrapCluster again, wait 5s for a leader):\n"+
			"     on disk at start: CurrentTerm 0, LastIndex 1\n",
		"0 of 6 crash points leave a server that elects no leader within 5s")
}
