package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/seedfall/seedfall/engine"
)

// simCache keeps one prepared Sim per config file, so an agent's run, shrink, cause and
// replay calls on one config build and compile its nodes once (several seconds) instead
// of every call. A Sim is reused only while its fingerprint holds: the config's bytes
// and the size and modification time of the Go sources its nodes are built from. The
// workflow is "run, fix the code, run again", and a cache keyed on the config alone
// would keep running the code from before the fix.
type simCache struct {
	mu    sync.Mutex // guards slots and every cachedSim's refs
	slots map[string]*simSlot
}

// simSlot is one config file's entry.
type simSlot struct {
	prep sync.Mutex // held while the config is (re)prepared, so concurrent calls build once
	cur  *cachedSim
}

type cachedSim struct {
	sim  *engine.Sim
	fp   string
	refs int // calls using it, plus one while it is the slot's current Sim
}

func newSimCache() *simCache { return &simCache{slots: map[string]*simSlot{}} }

// acquire returns the prepared Sim for the config at path (absolute), preparing it if
// the cache has none or the sources changed, and a release func the caller must call
// when done with it. progress receives a line per build step when the nodes are built.
func (c *simCache) acquire(ctx context.Context, path string, progress func(string)) (*engine.Sim, func(), error) {
	cfg, err := engine.LoadConfig(path)
	if err != nil {
		return nil, nil, err
	}
	fp, err := fingerprint(cfg)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	slot := c.slots[path]
	if slot == nil {
		slot = &simSlot{}
		c.slots[path] = slot
	}
	c.mu.Unlock()

	slot.prep.Lock()
	defer slot.prep.Unlock()
	c.mu.Lock()
	if cs := slot.cur; cs != nil && cs.fp == fp {
		cs.refs++
		c.mu.Unlock()
		return cs.sim, c.releaser(cs), nil
	}
	c.mu.Unlock()
	sim, err := engine.Prepare(ctx, cfg, engine.PrepareOptions{Progress: progress})
	if err != nil {
		return nil, nil, err
	}
	cs := &cachedSim{sim: sim, fp: fp, refs: 2}
	c.mu.Lock()
	old := slot.cur
	slot.cur = cs
	c.mu.Unlock()
	if old != nil {
		c.releaser(old)()
	}
	return sim, c.releaser(cs), nil
}

func (c *simCache) releaser(cs *cachedSim) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			cs.refs--
			last := cs.refs == 0
			c.mu.Unlock()
			if last {
				cs.sim.Close()
			}
		})
	}
}

// close drops every cached Sim; Sims still in use close when their calls release them.
func (c *simCache) close() {
	c.mu.Lock()
	var drop []*cachedSim
	for _, slot := range c.slots {
		if slot.cur != nil {
			drop = append(drop, slot.cur)
			slot.cur = nil
		}
	}
	c.mu.Unlock()
	for _, cs := range drop {
		c.releaser(cs)()
	}
}

// fingerprint identifies what Prepare would build from cfg: the config's bytes, its
// patch files, and the size and modification time of every build input (Go, assembly
// and C sources, go.mod, go.sum, go.work) under the config's module root and under each
// node's package directory. Hidden, "_" and testdata directories and nested modules below
// the module root are skipped, as the go command skips them; files embedded with
// //go:embed that are not sources, and packages outside the module, are not watched.
func fingerprint(cfg *engine.Config) (string, error) {
	h := sha256.New()
	data, err := os.ReadFile(cfg.Path)
	if err != nil {
		return "", fmt.Errorf("read config: %w", err)
	}
	fmt.Fprintf(h, "config %d\n", len(data))
	h.Write(data)
	stamp := func(p string, info fs.FileInfo) {
		fmt.Fprintf(h, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
	}
	nodes := cfg.AllNodes()
	for _, n := range nodes {
		for _, p := range n.Patches {
			if !filepath.IsAbs(p) {
				p = filepath.Join(cfg.Dir, p)
			}
			if info, err := os.Stat(p); err == nil {
				stamp(p, info)
			}
		}
	}
	walk := func(root string, skip bool) {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: the build will say so
			}
			if d.IsDir() {
				name := d.Name()
				if skip && p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
					return filepath.SkipDir
				}
				if skip && p != root && isFile(filepath.Join(p, "go.mod")) {
					return filepath.SkipDir // another module: not part of this build
				}
				return nil
			}
			if !buildInput(d.Name()) {
				return nil
			}
			if info, err := d.Info(); err == nil {
				stamp(p, info)
			}
			return nil
		})
	}
	walk(moduleRoot(cfg.Dir), true)
	for _, n := range nodes {
		switch {
		case strings.HasPrefix(n.Pkg, "."):
			walk(filepath.Join(cfg.Dir, n.Pkg), false)
		case filepath.IsAbs(n.Pkg):
			// A config `seedfall test` derived (in the cache) names its test package
			// absolutely: its module is what the build reads.
			walk(moduleRoot(n.Pkg), true)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func buildInput(name string) bool {
	switch name {
	case "go.mod", "go.sum", "go.work", "go.work.sum":
		return true
	}
	switch filepath.Ext(name) {
	case ".go", ".s", ".c", ".h", ".syso":
		return true
	}
	return false
}

func isFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir()
}

// moduleRoot is the nearest directory at or above dir that holds a go.mod, else dir.
func moduleRoot(dir string) string {
	for d := dir; ; {
		if isFile(filepath.Join(d, "go.mod")) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
