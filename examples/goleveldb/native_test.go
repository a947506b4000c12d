package goleveldb_test

import (
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// Finding 20 natively, on the host: the directory a process killed inside the first
// OpenFile leaves (an empty MANIFEST-000000, or a manifest and an empty CURRENT.0)
// makes every later OpenFile fail; with the patch, OpenFile creates the database.
func TestNativeFirstOpenCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds goleveldb natively twice")
	}
	out := exampletest.Native(t, "./native/first-open-crash")
	exampletest.WantLines(t, out,
		"manifest only: OpenFile: database entry point either missing or corrupted",
		"empty CURRENT.0: OpenFile: leveldb/storage: corrupted or incomplete CURRENT file")
	out = exampletest.Native(t, "./native/first-open-crash", "patches/fix-incomplete-first-current.patch")
	exampletest.WantLines(t, out,
		"manifest only: OpenFile ok, reopened twice, k=v",
		"empty CURRENT.0: OpenFile ok, reopened twice, k=v")
}
