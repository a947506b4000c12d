package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutWritesVisualizationsThroughWorkers: `run -out` has the worker processes write
// the Porcupine visualization of a linearizability failure next to the results file,
// and the FAIL block names it. (Workers once dropped the out dir: only -inproc wrote it.)
func TestOutWritesVisualizationsThroughWorkers(t *testing.T) {
	cfg := filepath.Join("..", "..", "examples", "linkv", "seedfall.stale.json")
	dir := t.TempDir()
	workers := workerLog(t)
	code, stdout, stderr := runCLI(t, "run", "-c", cfg, "-seeds", "2", "-workers", "1", "-out", filepath.Join(dir, "r.jsonl"))
	if code != exitFail {
		t.Fatalf("linkv stale seed 2: exit %d, want a failure\n%s\n%s", code, stdout, stderr)
	}
	if workers() == 0 {
		t.Fatal("the sweep started no worker process")
	}
	vis := filepath.Join(dir, "seed-2.linearizability.html")
	data, err := os.ReadFile(vis)
	if err != nil {
		t.Fatalf("no visualization written through the workers: %v\n%s", err, stdout)
	}
	if !strings.Contains(string(data), "<html") {
		t.Errorf("%s is not an HTML page", vis)
	}
	if !strings.Contains(stdout, "linearizability visualization: "+vis) {
		t.Errorf("the output does not name %s:\n%s", vis, stdout)
	}
}
