package lin

import (
	"testing"
	"time"
)

func TestZZ(t *testing.T) {
	for _, n := range []int{16, 18, 20, 22} {
		start := time.Now()
		r, _, _ := Check("register", hardHistory(n), 0)
		t.Log(n, r.Outcome, time.Since(start))
	}
}
