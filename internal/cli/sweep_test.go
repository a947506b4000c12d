package cli

import (
	"testing"
	"time"
)

// TestProgressLine: the ETA is the time the remaining seeds take at the rate so far
// (halfway through 400 seeds in 20 s: 20 s to go, not "0s").
func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		done, failed, total int
		el                  time.Duration
		want                string
	}{
		{200, 3, 400, 20 * time.Second, "200/400 seeds, 3 failed, 10.0 seeds/s, ETA 20s"},
		{1, 0, 1000, 2 * time.Second, "1/1000 seeds, 0 failed, 0.5 seeds/s, ETA 33m18s"},
		{400, 0, 400, 40 * time.Second, "400/400 seeds, 0 failed, 10.0 seeds/s, ETA 0s"},
		{0, 0, 10, 0, "0/10 seeds, 0 failed, 0.0 seeds/s, ETA ?"},
	} {
		if got := ProgressLine(tc.done, tc.failed, tc.total, tc.el); got != tc.want {
			t.Errorf("ProgressLine(%d, %d, %d, %s) = %q, want %q", tc.done, tc.failed, tc.total, tc.el, got, tc.want)
		}
	}
}
