package rosedb_test

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/examples/exampletest"
)

// TestCrashStatesFindTornChunk: the systematic crash states of seed 1 (disk ops 13-41 of
// the server, a few dozen states) find finding 3, the WAL's torn chunk, at its write
// (segment.go:371) without any random crash landing there, and report the site's
// distinct failures each with a plan that replays to it: the loss shows at the final
// check and at the read-back after a reconnection. The fixed WAL has no failing state
// in the same ops.
func TestCrashStatesFindTornChunk(t *testing.T) {
	type report struct {
		States, Failing, Equivalent int
		Sites                       []struct {
			Site     string
			Failing  int
			Failures []struct {
				States         int
				Reason, Replay string
			}
		}
	}
	args := []string{"crashes", "-seed", "1", "-ops", "13-41", "-workers", "2", "-json", "-out", t.TempDir()}
	var bad report
	code := exampletest.RunJSON(t, &bad, append(args, "-c", "wal.json")...)
	if code != 1 || bad.Failing == 0 || len(bad.Sites) == 0 || bad.Equivalent == 0 {
		t.Fatalf("wal.json: exit %d, %+v: want failing states and some equivalent ones not run", code, bad)
	}
	s := bad.Sites[0]
	if !strings.HasSuffix(s.Site, "rosedblabs/wal@v1.3.8/segment.go:371") || len(s.Failures) < 2 {
		t.Fatalf("first site %s with %d distinct failures: want segment.go:371 with at least 2", s.Site, len(s.Failures))
	}
	n := 0
	for _, f := range s.Failures {
		n += f.States
		replay := strings.Fields(strings.TrimPrefix(f.Replay, "seedfall "))
		code, out := sf(t, append(replay, "-q")...)
		if code != 1 || !strings.Contains(out, f.Reason) {
			t.Errorf("%s: exit %d, want %q\n%s", f.Replay, code, f.Reason, out)
		}
	}
	if n != s.Failing {
		t.Errorf("the distinct failures count %d states, the site %d", n, s.Failing)
	}

	var good report
	if code := exampletest.RunJSON(t, &good, append(args, "-c", "wal.fixed.json")...); code != 0 || good.Failing != 0 || good.States == 0 {
		t.Fatalf("wal.fixed.json: exit %d, %+v: want no failing state", code, good)
	}
}
