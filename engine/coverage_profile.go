package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seedfall/seedfall/engine/internal/build"
)

// CoverageProfileName is the text profile writeCoverageProfile writes into a coverage
// directory.
const CoverageProfileName = "profile.out"

// writeCoverageProfile writes dir/profile.out: the coverage data in dir (WriteCoverageDir)
// as `go tool covdata textfmt` prints it, with every file named by its absolute path on
// this machine, so that `go tool cover -func` and `-html` read it from any directory.
// A file that a node's patches edit is named by a copy of the patched source, written
// under dir/src/, so cover reads the source the node was built from, not the module's.
// It returns the profile's path.
func writeCoverageProfile(dir string, cfg *Config) (string, error) {
	tmp, err := os.CreateTemp("", "seedfall-textfmt-*.out")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command("go", "tool", "covdata", "textfmt", "-i", dir, "-o", tmp.Name())
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go tool covdata textfmt -i %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
	}
	text, err := os.ReadFile(tmp.Name())
	if err != nil {
		return "", err
	}
	names, err := coverageFileNames(dir, cfg)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		out.WriteString(renameProfileLine(sc.Text(), names))
		out.WriteByte('\n')
	}
	p := filepath.Join(dir, CoverageProfileName)
	return p, os.WriteFile(p, out.Bytes(), 0o644)
}

// renameProfileLine renames the file of one text-profile line
// ("file:1.2,3.4 stmts count") with names; "mode: …" and unknown files pass as they are.
func renameProfileLine(line string, names func(string) string) string {
	sp := strings.IndexByte(line, ' ')
	if strings.HasPrefix(line, "mode:") || sp < 0 {
		return line
	}
	colon := strings.LastIndex(line[:sp], ":")
	if colon < 0 {
		return line
	}
	return names(line[:colon]) + line[colon:]
}

// coverageFileNames returns the renaming of WriteCoverageProfile: patched files to
// copies of their patched source under dir/src/<import path>/, every other file to its
// absolute path, unknown ones unchanged.
func coverageFileNames(dir string, cfg *Config) (func(string) string, error) {
	srcs := loadProfileSources(cfg)
	byDir := map[string]string{} // package directory -> import path
	for imp, d := range srcs.dirs {
		byDir[d] = imp
	}
	patched := map[string]string{} // import-path file name -> patched copy
	for _, n := range cfg.AllNodes() {
		if len(n.Patches) == 0 {
			continue
		}
		files, err := build.PatchedFiles(buildSpec(cfg, n))
		if err != nil {
			return nil, err
		}
		origs := make([]string, 0, len(files))
		for o := range files {
			origs = append(origs, o)
		}
		sort.Strings(origs)
		for _, orig := range origs {
			imp, ok := byDir[filepath.Dir(orig)]
			if !ok {
				continue
			}
			name := path.Join(imp, filepath.Base(orig))
			copyPath, err := filepath.Abs(filepath.Join(dir, "src", filepath.FromSlash(name)))
			if err != nil {
				return nil, err
			}
			if err := os.MkdirAll(filepath.Dir(copyPath), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(copyPath, files[orig], 0o644); err != nil {
				return nil, err
			}
			patched[name] = copyPath
		}
	}
	return func(name string) string {
		if p, ok := patched[name]; ok {
			return p
		}
		return srcs.resolve(name)
	}, nil
}
