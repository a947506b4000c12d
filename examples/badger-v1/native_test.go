package badgerv1_test

import (
	"regexp"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 40 natively (three processes that exit without Close, no power loss): the
// replay that fills a memtable flushes a head past the transaction it has not yet put
// in the memtable, and the next open skips that transaction; patched, none is lost.
// Which transaction is lost is where the replay fills the memtable, which varies from
// run to run (k144-k146 here: the skiplist's node heights are random, and with them the
// arena's size at each entry); that exactly one is lost does not.
func TestNativeReplayHead(t *testing.T) {
	out := exampletest.Native(t, "./native/replay-head")
	exampletest.WantLines(t, out, "reopen: the replay's flush is in the manifest, tables: 1",
		"check: acknowledged writes lost: 1 of 150")
	if !regexp.MustCompile(`(?m)^check: k1\d\d: Key not found$`).MatchString(out) {
		t.Errorf("no key of the last transactions reported lost:\n%s", out)
	}
	out = exampletest.Native(t, "./native/replay-head", "patches/badger-v1.6.2-replay-head.patch")
	exampletest.WantLines(t, out, "reopen: the replay's flush is in the manifest, tables: 1",
		"check: acknowledged writes lost: 0 of 150")
}
