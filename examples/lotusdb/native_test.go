package lotusdb_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// The Options.Sync finding natively: strace -f records the child's WAL writes and
// fsyncs; with Options.Sync true no Put is fsynced; patched, each is before its
// acknowledgement.
func TestNativeOptionsSync(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed (.ci/run installs it)")
	}
	out := exampletest.Native(t, "./native/options-sync")
	exampletest.WantLines(t, out, "10 DB.Put calls acknowledged, 10 writes and 0 fsyncs of 000000001.SEG.1",
		"acknowledged before their WAL write was fsynced: 10 of 10")
	out = exampletest.Native(t, "./native/options-sync", "patches/lotusdb-fix-options-sync.patch")
	exampletest.WantLines(t, out, "10 DB.Put calls acknowledged, 10 writes and 10 fsyncs of 000000001.SEG.1",
		"acknowledged before their WAL write was fsynced: 0 of 10")
}

// The index finding natively, its cause: strace -f records the commit lotusdb.Open
// makes in each index file; no sync orders its meta page after its pages; patched,
// bbolt fdatasyncs before and after the meta page.
func TestNativeIndexCommitUnsynced(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed (.ci/run installs it)")
	}
	out := exampletest.Native(t, "./native/index-commit")
	if n := strings.Count(out, "2 new pages written, syncs before the meta page that points to them: 0, after it: 0"); n != 3 {
		t.Errorf("unpatched: want the three index files' commits unsynced, got %d:\n%s", n, out)
	}
	out = exampletest.Native(t, "./native/index-commit", "patches/lotusdb-fix-index-nosync.patch")
	if n := strings.Count(out, "2 new pages written, syncs before the meta page that points to them: 1, after it: 1"); n != 3 {
		t.Errorf("patched: want the three index files' commits synced, got %d:\n%s", n, out)
	}
}

// The index finding natively, its result: the meta page of Open's commit kept and its
// pages lost (the state written by the program) make every Open panic.
func TestNativeIndexMetaOnlyPanics(t *testing.T) {
	out := exampletest.Native(t, "./native/index-meta-only")
	exampletest.WantLines(t, out, "restart 1, lotusdb.Open: panic: invalid freelist page: 0, page type is unknown<00>",
		"restart 2, lotusdb.Open: panic: invalid freelist page: 0, page type is unknown<00>")
}

// Finding 3 (rosedblabs/wal v1.3.6) natively, through lotusdb: a torn last WAL record
// makes Open fail; the wal patch cuts it off and keeps the 10 acknowledged keys.
func TestNativeTornWAL(t *testing.T) {
	out := exampletest.Native(t, "./native/torn-wal")
	if n := strings.Count(out, "lotusdb.Open: invalid crc, the data may be corrupted"); n != 2 {
		t.Errorf("unpatched: want Open to fail on both torn tails, got %d:\n%s", n, out)
	}
	out = exampletest.Native(t, "./native/torn-wal", "patches/wal-v1.3.6-truncate-torn-tail.patch")
	if n := strings.Count(out, "lotusdb.Open: ok, 10 of 10 acknowledged keys read back"); n != 2 {
		t.Errorf("patched: want 10 of 10 keys on both torn tails, got %d:\n%s", n, out)
	}
	exampletest.WantLines(t, out, `a Put after the recovery, read after another Open: "after-recovery" (err <nil>)`)
}
