package mcpserver_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/mcpserver"
)

// TestReplaySpinningGuestLeaksNothing: the server is a long-lived process, so a replay
// of a guest that spins without host calls (engine/testdata/spin.json spins on seed 2,
// watchdog 2s) must come back as a watchdog outcome without leaving the spinning
// instance's goroutine behind, call after call. The server runs in this process, so its
// goroutines can be counted. The garbage collector is off for the test: a goroutine
// spinning in wasm cannot be stopped for a collection, which would hang instead of fail.
func TestReplaySpinningGuestLeaksNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds seedfall and a guest")
	}
	gc := debug.SetGCPercent(-1)
	defer func() {
		if !t.Failed() {
			debug.SetGCPercent(gc)
		}
	}()
	bin := filepath.Join(t.TempDir(), "seedfall")
	build := exec.Command("go", "build", "-o", bin, "./cmd/seedfall")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/seedfall: %v\n%s", err, out)
	}
	dir, err := filepath.Abs("../../engine/testdata")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Dir: dir, Workers: 1, Executable: bin})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx, st) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "seedfall-test", Version: "v0"}, nil)
	session, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		session.Close()
		<-served
	}()
	replay := func(seed uint64) mcpserver.ReplayOutput {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "seedfall_replay",
			Arguments: map[string]any{"config": "spin.json", "seed": seed}})
		if err != nil {
			t.Fatalf("replay seed %d: %v", seed, err)
		}
		return decode[mcpserver.ReplayOutput](t, "seedfall_replay", res)
	}
	// Warm up: the config is built and cached; seed 1 does not spin.
	if out := replay(1); out.Verdict != engine.VerdictPass {
		t.Fatalf("seed 1: %s %v, want pass", out.Verdict, out.Failure)
	}
	settle := func(limit int) int {
		n := runtime.NumGoroutine()
		for deadline := time.Now().Add(5 * time.Second); n > limit && time.Now().Before(deadline); n = runtime.NumGoroutine() {
			time.Sleep(50 * time.Millisecond)
		}
		return n
	}
	base := settle(0)
	for i := 0; i < 3; i++ {
		start := time.Now()
		out := replay(2)
		if out.Verdict != engine.VerdictWatchdog || out.Failure == nil {
			t.Fatalf("replay %d of the spinning seed: %s %v, want watchdog", i+1, out.Verdict, out.Failure)
		}
		// How long it took is logged, not asserted: a loaded machine may stretch it.
		t.Logf("replay %d of the spinning seed took %s with a 2s watchdog", i+1, time.Since(start))
		// (No goroutine dump here: it stops the world, which a spinning guest never allows.)
		if n := settle(base); n > base {
			t.Fatalf("after replay %d of the spinning seed: %d goroutines, %d before: the spinning guest leaked", i+1, n, base)
		}
	}
	// Shrink and cause of the spinning seed run it in workers too: it does not fail (it
	// is a watchdog), which is a tool error, and nothing leaks.
	for tool, args := range map[string]map[string]any{
		"seedfall_shrink": {"config": "spin.json", "seed": 2},
		"seedfall_cause":  {"config": "spin.json", "seed": 2, "moments": 2, "futures": 2},
	} {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(text(res), "does not fail (watchdog)") {
			t.Fatalf("%s of the spinning seed: %v %v, want a tool error saying it does not fail (watchdog)", tool, err, res)
		}
		if n := settle(base); n > base {
			t.Fatalf("after %s of the spinning seed: %d goroutines, %d before: the spinning guest leaked", tool, n, base)
		}
	}
	// The server still works.
	if out := replay(1); out.Verdict != engine.VerdictPass {
		t.Fatalf("seed 1 after the spins: %s %v, want pass", out.Verdict, out.Failure)
	}
}
