package engine

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/coverage"
	"github.com/seedfall/seedfall/engine/internal/cover"
)

// CoverageConfig is the config's "coverage" field: build the nodes with Go's coverage
// instrumentation of these packages and collect the counters of every incarnation.
type CoverageConfig struct {
	// Packages are go build -coverpkg patterns, resolved in the config's directory
	// ("./...", "github.com/tidwall/wal/...").
	Packages []string `json:"packages"`

	mu        sync.Mutex
	builds    int            // nodes built
	unmatched map[string]int // pattern -> builds that found no package for it
}

func (c *CoverageConfig) validate() error {
	if len(c.Packages) == 0 {
		return fmt.Errorf("field coverage.packages: list the packages to instrument, e.g. [\"./...\"]")
	}
	for i, p := range c.Packages {
		switch {
		case strings.TrimSpace(p) == "":
			return fmt.Errorf("field coverage.packages[%d]: empty package pattern", i)
		case strings.ContainsAny(p, ", \t\n"):
			return fmt.Errorf("field coverage.packages[%d]: %q is not one package pattern (no commas or spaces; one pattern per entry)", i, p)
		case strings.HasPrefix(p, "-"):
			return fmt.Errorf("field coverage.packages[%d]: %q is not a package pattern", i, p)
		}
	}
	return nil
}

// unmatchedWarning is how go build says that a -coverpkg pattern matched none of the
// packages it built.
const unmatchedWarning = "warning: no packages being built depend on matches for pattern "

// noteUnmatched records the patterns that the build of a node reported as matching
// none of its packages.
func (c *CoverageConfig) noteUnmatched(output string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unmatched == nil {
		c.unmatched = map[string]int{}
	}
	c.builds++
	for _, l := range strings.Split(output, "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(l), unmatchedWarning); ok {
			c.unmatched[strings.TrimSpace(p)]++
		}
	}
}

// checkMatched fails when a pattern matched no package of any node: a typo, or a
// module the nodes do not use, which would otherwise show as no coverage at all.
func (c *CoverageConfig) checkMatched() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.Packages {
		if c.builds > 0 && c.unmatched[p] == c.builds {
			return fmt.Errorf("field coverage.packages[%d]: %q matches no package that a node builds", i, p)
		}
	}
	return nil
}

// buildFlags are the go build flags of a node built with coverage. The node's main
// package is always instrumented too: the compiler calls the coverage hook that
// registers the counters from the main package's init only when it instruments it.
func (c *CoverageConfig) buildFlags(mainPkg string) []string {
	pats := append([]string(nil), c.Packages...)
	if !slices.Contains(pats, mainPkg) {
		pats = append(pats, mainPkg)
	}
	return []string{"-cover", "-covermode=count", "-coverpkg=" + strings.Join(pats, ",")}
}

// Go's pseudo counter modes of packages that only register (internal/coverage).
const (
	modeRegOnly  = 4
	modeTestMain = 5
)

// incCoverage is what an incarnation's guest registered at init (cover_meta,
// cover_counters): where its coverage meta-data and counters live in linear memory.
type incCoverage struct {
	pkgs    []coverPkg
	regions [][2]uint32 // address, number of uint32 counters
}

type coverPkg struct {
	blob, blobLen uint32
	hash          [16]byte
	path          string
	pkgID         int32
	mode, gran    uint8
}

// CoverMeta records one instrumented package the guest's InitHook registered
// (seedfall.cover_meta): where its meta-data blob lives in linear memory, and its hash,
// path, ID, counter mode and granularity.
func (inc *incarnation) CoverMeta(blob, blobLen uint32, hash [16]byte, path string, pkgID int32, mode, gran uint8) {
	if inc.cov == nil {
		inc.cov = &incCoverage{}
	}
	inc.cov.pkgs = append(inc.cov.pkgs, coverPkg{blob: blob, blobLen: blobLen, hash: hash, path: path,
		pkgID: pkgID, mode: mode, gran: gran})
}

// CoverCounters records one counter array the guest registered (seedfall.cover_counters):
// its address and its number of uint32 counters.
func (inc *incarnation) CoverCounters(addr, n uint32) {
	if inc.cov == nil {
		inc.cov = &incCoverage{}
	}
	inc.cov.regions = append(inc.cov.regions, [2]uint32{addr, n})
}

// collectCoverage reads the incarnation's counters out of its linear memory into the
// world's coverage. It runs when the incarnation has stopped, however it stopped (its
// exit, a crash, the end of the run), before its module is closed; no guest code runs.
func (inc *incarnation) collectCoverage(m api.Memory) {
	c := inc.cov
	if c == nil || len(c.pkgs) == 0 || m == nil {
		return
	}
	// The binary's mode is its packages' (the main package of a build whose patterns
	// do not name it registers in the pseudo-mode "regonly", which Go skips too).
	mode, gran := c.pkgs[0].mode, c.pkgs[0].gran
	for _, p := range c.pkgs {
		if p.mode != modeRegOnly && p.mode != modeTestMain {
			mode, gran = p.mode, p.gran
			break
		}
	}
	pkgs := make([]cover.Pkg, len(c.pkgs))
	for i, p := range c.pkgs {
		pkgs[i] = cover.Pkg{Hash: p.hash, Path: p.path, PkgID: p.pkgID, Mode: p.mode, Gran: p.gran}
	}
	hash := cover.MetaHash(pkgs, mode, gran)
	meta := &cover.Meta{Hash: hash, Mode: mode, Gran: gran, Pkgs: pkgs}
	key := meta.HashString()
	inc.w.sim.coverMetas.ensure(key, func() []byte {
		for i, p := range c.pkgs {
			b, _ := m.Read(p.blob, p.blobLen)
			pkgs[i].Blob = append([]byte(nil), b...)
		}
		return meta.EncodeMetaFile()
	})
	acc := inc.w.cov.Binary(key, cover.ModeName(mode))
	for _, r := range c.regions {
		data, ok := m.Read(r[0], r[1]*4)
		if !ok {
			continue
		}
		visitCounters(data, c.pkgs, acc.Add)
	}
}

// visitCounters walks one counter array as the runtime lays it out: per function that
// ran, its number of counters, package ID, function ID, then the counters. A function
// whose counters are all zero is skipped.
func visitCounters(data []byte, pkgs []coverPkg, f func(pkg, fn uint32, ctrs []uint32)) {
	n := len(data) / 4
	at := func(i int) uint32 { return binary.LittleEndian.Uint32(data[4*i:]) }
	var ctrs []uint32
	for i := 0; i < n; i++ {
		nc := at(i)
		if nc == 0 {
			continue
		}
		if i+3+int(nc) > n {
			return // not a function record: the array is damaged
		}
		pkg, fn := at(i+1), at(i+2)
		ctrs = ctrs[:0]
		live := false
		for j := 0; j < int(nc); j++ {
			v := at(i + 3 + j)
			live = live || v != 0
			ctrs = append(ctrs, v)
		}
		i += 3 + int(nc) - 1
		if !live {
			continue
		}
		switch id := int32(pkg); {
		case id == 0:
			continue
		case id < 0:
			slot := -1
			for k, p := range pkgs {
				if p.pkgID == id {
					slot = k
					break
				}
			}
			if slot < 0 {
				continue
			}
			pkg = uint32(slot)
		default:
			pkg--
		}
		f(pkg, fn, ctrs)
	}
}

// coverMetaCache writes each binary's meta-data file once per process into the cache
// (coverage.MetaPath), where whoever renders the coverage finds it: the sweep's parent
// process, the report.
type coverMetaCache struct {
	mu   sync.Mutex
	done map[string]bool
}

func (c *coverMetaCache) ensure(key string, encode func() []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done[key] {
		return
	}
	if c.done == nil {
		c.done = map[string]bool{}
	}
	c.done[key] = true
	p := coverage.MetaPath(key)
	if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "tmp-covmeta-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(encode())
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}
