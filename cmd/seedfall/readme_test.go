package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeFirstSteps: the README opens with the two set-up commands (the kvlog sweep
// and the tests), .ci/run runs exactly that test command, and a newcomer who ran the
// sweep with `go run` is told how to run the `seedfall replay …` lines it prints.
func TestReadmeFirstSteps(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	_, block, ok := strings.Cut(text, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	want := []string{"go run ./cmd/seedfall run -c examples/kvlog/seedfall.json -seeds 1-200", "go test ./..."}
	if !ok || strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Errorf("the README's first block is %q, want %q", cmds, want)
	}
	first, _, _ := strings.Cut(text, "## What the first command prints")
	if !strings.Contains(first, "go install ./cmd/seedfall") || !strings.Contains(first, "go run ./cmd/seedfall` where they say `seedfall`") {
		t.Error("the README does not say, before the first output, how to run the printed seedfall commands")
	}
	ciRun, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(ciRun)), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != want[1] {
		t.Errorf(".ci/run ends with %q, want the README's test command %q", last, want[1])
	}
	// And it runs the release-dependent packages on the other supported Go release: the
	// commands of its release list, two at a time, with GOTOOLCHAIN=$other.
	for _, w := range []string{"other=go1.27.3", "GOTOOLCHAIN=$other pool \"${release[@]}\"",
		`"go test ./engine/internal/...`, `"cd examples/raft && go test`, `"cd examples/nats && go test`} {
		if !strings.Contains(string(ciRun), w) {
			t.Errorf(".ci/run does not run the overlays' tests again with GOTOOLCHAIN=go1.27.3: no %q", w)
		}
	}
}
