package engine

import (
	"context"
	"sync"
	"testing"
)

var (
	benchOnce sync.Once
	benchSim  *Sim
	benchErr  error
)

func kvlogSim(b testing.TB) *Sim {
	benchOnce.Do(func() {
		cfg, err := LoadConfig("../examples/kvlog/seedfall.fixed.json")
		if err != nil {
			benchErr = err
			return
		}
		benchSim, benchErr = Prepare(context.Background(), cfg, PrepareOptions{})
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchSim
}

// BenchmarkKvlogRun measures one run of fixed kvlog (seeds vary), in this process.
func BenchmarkKvlogRun(b *testing.B) {
	s := kvlogSim(b)
	b.ResetTimer()
	var calls, switches int64
	for i := 0; i < b.N; i++ {
		r := s.Run(context.Background(), uint64(i+1), RunOptions{})
		if r.Verdict != VerdictPass {
			b.Fatalf("seed %d: %s", i+1, r)
		}
		calls += r.Stats.HostCalls
		switches += r.Stats.Switches
	}
	b.ReportMetric(float64(calls)/float64(b.N), "hostcalls/run")
	b.ReportMetric(float64(switches)/float64(b.N), "switches/run")
}
