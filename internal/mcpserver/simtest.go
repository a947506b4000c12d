package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/internal/simtestcfg"
)

// target is what a tool runs: a config file, or a simulation test (package simtest)
// named by its package directory and a -run regexp.
type target struct {
	config, test, run string
}

// args is the target as a tool's JSON arguments, for the next call a result suggests.
func (tg target) args() string {
	if tg.test != "" {
		return fmt.Sprintf("\"test\": %q, \"run\": %q", tg.test, tg.run)
	}
	return fmt.Sprintf("\"config\": %q", tg.config)
}

// configPath is the config file of tg: the config itself, or the config `seedfall test`
// derives from the one simulation test tg names.
func (s *Server) configPath(ctx context.Context, tg target) (string, error) {
	switch {
	case tg.test == "" && tg.run != "":
		return "", errors.New("run names a simulation test of a package: give the package as test too")
	case tg.test == "":
		return resolve(s.root, "config", tg.config)
	case tg.config != "":
		return "", errors.New("give either config or test, not both")
	}
	dir, err := resolve(s.root, "test package", tg.test)
	if err != nil {
		return "", err
	}
	found, err := simtestcfg.Find([]string{dir}, tg.run)
	if err != nil {
		return "", err
	}
	var names []string
	for _, p := range found {
		names = append(names, p.Tests...)
	}
	if len(names) != 1 {
		return "", fmt.Errorf("test %s, run %q: %d simulation tests match (%s); give a run that matches one, e.g. ^%s$", tg.test, tg.run, len(names), strings.Join(names, ", "), names[0])
	}
	p := found[0]
	p.Pkg = "./" + filepath.ToSlash(display(s.root, dir))
	d, err := simtestcfg.Derive(ctx, p, nil)
	if err != nil {
		return "", err
	}
	return d[0].Path, nil
}
