package engine

import (
	"strings"
	"testing"
)

// The brief form of a fault names it inside trace lines (the quiet period's drops),
// which are hashed: these are the exact strings it must keep producing. The full form is
// checked beside it so that a kind's detail and brief cannot drift into one another.
func TestFaultTextForms(t *testing.T) {
	for _, tc := range []struct {
		f           Fault
		brief, full string
	}{
		{Fault{AtNS: 1e9, Kind: FaultCrash, Node: "n1"}, "crash n1", "1s crash n1"},
		{Fault{AtNS: 1e9, Kind: FaultCrash, Node: "n1", DiskOp: 7, Where: "fsync wal", RestartNS: 5e8},
			"crash n1 during disk op #7", "1s crash n1 during disk op #7 (fsync wal), restart at 1.5s"},
		{Fault{AtNS: 2e9, Kind: FaultPartition, Node: "n2", Peers: []string{"n1", "n3"}, DurationNS: 3e8},
			"partition n2", "2s partition n2 <-> n1,n3 for 300ms"},
		{Fault{AtNS: 2e9, Kind: FaultSplit, Node: "n1", Groups: [][]string{{"n1", "n2"}, {"n3"}}, DurationNS: 8e8},
			"split n1,n2 | n3", "2s split n1 into n1,n2 | n3 for 800ms"},
		{Fault{AtNS: 3e9, Kind: FaultLatency, Node: "n3", LatencyNS: 5e7, DurationNS: 1e9},
			"latency n3", "3s latency n3 +50ms for 1s"},
		{Fault{AtNS: 3e9, Kind: FaultFsyncEIO, Node: "n1", DiskOp: 4},
			"fsync_eio n1", "3s fsync_eio n1 at disk op #4"},
	} {
		if got := tc.f.text(faultBrief); got != tc.brief {
			t.Errorf("brief %+v = %q, want %q", tc.f, got, tc.brief)
		}
		if got := tc.f.String(); got != tc.full {
			t.Errorf("String %+v = %q, want %q", tc.f, got, tc.full)
		}
		if got, want := tc.f.text(faultUntimed), strings.SplitN(tc.full, " ", 2)[1]; got != want {
			t.Errorf("untimed %+v = %q, want %q", tc.f, got, want)
		}
	}
}
