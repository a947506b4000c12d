package ci

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEntrypointContainerEnv runs the entrypoint's code path (ParseInputs and
// EnvFromGetenv over the process environment, as `seedfall ci` in the image does) under
// the environment GitHub gives a container action: HOME=/github/home, the workspace at
// /github/workspace as the working directory and GITHUB_WORKSPACE, the inputs as
// INPUT_* variables whose names keep their dashes (INPUT_SHRINK-BUDGET), and the
// command files under /github/file_commands. /github is a temporary directory here.
// The inputs with dashes take effect (fail-on never turns the failure's exit 1 into 0;
// shrink-budget 0s shrinks nothing), the report lands in the workspace, and the
// annotation's path is relative to the workspace.
func TestEntrypointContainerEnv(t *testing.T) {
	gh := t.TempDir() // stands for /github
	ws := filepath.Join(gh, "workspace")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.MkdirAll(filepath.Join(gh, "home"), 0o755))
	must(t, os.MkdirAll(filepath.Join(gh, "file_commands"), 0o755))
	w := workspace(t)
	for _, f := range []string{"go.mod", "seedfall.json", "server/log.go"} {
		b, err := os.ReadFile(filepath.Join(w, f))
		must(t, err)
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755))
		must(t, os.WriteFile(filepath.Join(ws, f), b, 0o644))
	}
	t.Chdir(ws)

	run := func(extra map[string]string) (int, string, *locEngine) {
		env := map[string]string{
			"HOME":                 "" + filepath.Join(gh, "home"),
			"GITHUB_WORKSPACE":     ws,
			"GITHUB_ACTIONS":       "true",
			"GITHUB_EVENT_NAME":    "",
			"GITHUB_EVENT_PATH":    "",
			"GITHUB_REPOSITORY":    "",
			"GITHUB_OUTPUT":        filepath.Join(gh, "file_commands", "set_output_1"),
			"GITHUB_STEP_SUMMARY":  filepath.Join(gh, "file_commands", "step_summary_1"),
			"INPUT_CONFIG":         "seedfall.json",
			"INPUT_SEEDS":          "1-20",
			"INPUT_MODE":           "auto",
			"INPUT_SHRINK-BUDGET":  "0s",
			"INPUT_BASELINE":       "",
			"INPUT_TOKEN":          "",
			"INPUT_COMMENT":        "true",
			"INPUT_FAIL-ON":        "never",
			"INPUT_SHARD":          "1/1",
			"INPUT_MUTATION":       "off",
			"INPUT_MUTATION-SEEDS": "1-5",
			"INPUT_PUBLISH":        "",
		}
		for k, v := range extra {
			env[k] = v
		}
		for k, v := range env {
			t.Setenv(k, v)
		}
		for _, f := range []string{"set_output_1", "step_summary_1"} {
			must(t, os.WriteFile(filepath.Join(gh, "file_commands", f), nil, 0o644))
		}
		in, err := ParseInputs(nil, os.Getenv, nil)
		must(t, err)
		eng := &locEngine{fakeEngine{bug: true}}
		var out bytes.Buffer
		code, err := Run(context.Background(), in, EnvFromGetenv(os.Getenv), eng, &out)
		must(t, err)
		return code, out.String(), eng
	}

	code, out, eng := run(nil)
	if code != ExitPass {
		t.Errorf("exit %d with INPUT_FAIL-ON=never, want 0:\n%s", code, out)
	}
	if len(eng.shrinks) != 0 {
		t.Errorf("INPUT_SHRINK-BUDGET=0s ignored: %d shrinks", len(eng.shrinks))
	}
	if !strings.Contains(out, "::error file=server/log.go,line=88,title=seedfall new failure::") {
		t.Errorf("no annotation at server/log.go:88 relative to the workspace:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, DefaultOut, artifactFile)); err != nil {
		t.Errorf("the report is not in the workspace: %v", err)
	}
	outputs := readOutputs(t, filepath.Join(gh, "file_commands", "set_output_1"))
	if outputs["new"] != "1" || outputs["conclusion"] != "success" {
		t.Errorf("outputs %v", outputs)
	}
	// Negative control: without the fail-on input the default (new) fails the step.
	if code, _, _ := run(map[string]string{"INPUT_FAIL-ON": ""}); code != ExitFailure {
		t.Errorf("exit %d without INPUT_FAIL-ON, want 1", code)
	}
}
