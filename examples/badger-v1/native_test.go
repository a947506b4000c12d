package badgerv1_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 40 natively (three processes that exit without Close, no power loss): the
// replay that fills a memtable flushes a head past the transaction it has not yet put
// in the memtable, and the next open skips that transaction; patched, none is lost.
func TestNativeReplayHead(t *testing.T) {
	out := exampletest.Native(t, "./native/replay-head")
	exampletest.WantLines(t, out, "reopen: the replay's flush is in the manifest, tables: 1",
		"check: k145: Key not found", "check: acknowledged writes lost: 1 of 150")
	out = exampletest.Native(t, "./native/replay-head", "patches/badger-v1.6.2-replay-head.patch")
	exampletest.WantLines(t, out, "reopen: the replay's flush is in the manifest, tables: 1",
		"check: acknowledged writes lost: 0 of 150")
}
