package engine

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/internal/cover"
	"github.com/seedfall/seedfall/engine/internal/overlay"
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

// Coverage is the coverage of the system under test in one run (or, merged, in many):
// per binary, the counters of the functions that ran, summed over the incarnations.
// It is not part of the run's identity (the trace).
type Coverage struct {
	// Binaries are sorted by MetaHash.
	Binaries []CoverageBinary `json:"binaries"`
}

// CoverageBinary is the coverage of one built binary (nodes built alike share one).
type CoverageBinary struct {
	// MetaHash names Go's meta-data file of the binary, covmeta.<MetaHash>, which
	// seedfall keeps in its cache (CoverageMetaPath).
	MetaHash string `json:"meta_hash"`
	// Mode is the counter mode ("count").
	Mode string `json:"mode"`
	// Funcs are the functions with a non-zero counter, sorted by (Pkg, Func).
	Funcs []CoverageFunc `json:"funcs"`
}

// CoverageFunc is the counters of one function: Pkg indexes the packages of the
// binary's meta-data, Func the package's functions, Counters its coverable units.
type CoverageFunc struct {
	Pkg      uint32   `json:"pkg"`
	Func     uint32   `json:"func"`
	Counters []uint32 `json:"counters"`
}

// Units lists the coverable units the coverage reached, one string a unit,
// "<meta hash>/<pkg>/<func>/<unit>", sorted: the set that exploration compares.
func (c *Coverage) Units() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, b := range c.Binaries {
		for _, f := range b.Funcs {
			for i, v := range f.Counters {
				if v != 0 {
					out = append(out, fmt.Sprintf("%s/%d/%d/%d", b.MetaHash, f.Pkg, f.Func, i))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// MergeCoverage sums coverages (nil ones are skipped); it returns nil when all are nil.
// Counters saturate at the largest uint32.
func MergeCoverage(cs ...*Coverage) *Coverage {
	var acc coverAcc
	found := false
	for _, c := range cs {
		if c == nil {
			continue
		}
		found = true
		for _, b := range c.Binaries {
			a := acc.binary(b.MetaHash, b.Mode)
			for _, f := range b.Funcs {
				a.add(f.Pkg, f.Func, f.Counters)
			}
		}
	}
	if !found {
		return nil
	}
	return acc.coverage()
}

// Merge returns c and o summed (see MergeCoverage).
func (c *Coverage) Merge(o *Coverage) *Coverage { return MergeCoverage(c, o) }

// ResultsCoverage merges the coverage of results (nil when none has any).
func ResultsCoverage(rs []*Result) *Coverage {
	cs := make([]*Coverage, 0, len(rs))
	for _, r := range rs {
		cs = append(cs, r.Coverage)
	}
	return MergeCoverage(cs...)
}

// coverAcc accumulates coverage: per meta hash, per function, the summed counters.
type coverAcc struct {
	bins map[string]*binAcc
}

type binAcc struct {
	mode  string
	funcs map[uint64][]uint32 // pkg<<32 | func
}

func (a *coverAcc) binary(hash, mode string) *binAcc {
	if a.bins == nil {
		a.bins = map[string]*binAcc{}
	}
	b := a.bins[hash]
	if b == nil {
		b = &binAcc{mode: mode, funcs: map[uint64][]uint32{}}
		a.bins[hash] = b
	}
	return b
}

func (b *binAcc) add(pkg, fn uint32, ctrs []uint32) {
	k := uint64(pkg)<<32 | uint64(fn)
	cur := b.funcs[k]
	if len(cur) < len(ctrs) {
		cur = append(cur, make([]uint32, len(ctrs)-len(cur))...)
		b.funcs[k] = cur
	}
	for i, v := range ctrs {
		if s := cur[i] + v; s >= cur[i] {
			cur[i] = s
		} else {
			cur[i] = ^uint32(0)
		}
	}
}

func (a *coverAcc) coverage() *Coverage {
	c := &Coverage{Binaries: []CoverageBinary{}}
	hashes := make([]string, 0, len(a.bins))
	for h := range a.bins {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	for _, h := range hashes {
		b := a.bins[h]
		keys := make([]uint64, 0, len(b.funcs))
		for k := range b.funcs {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		cb := CoverageBinary{MetaHash: h, Mode: b.mode, Funcs: make([]CoverageFunc, 0, len(keys))}
		for _, k := range keys {
			cb.Funcs = append(cb.Funcs, CoverageFunc{Pkg: uint32(k >> 32), Func: uint32(k), Counters: b.funcs[k]})
		}
		c.Binaries = append(c.Binaries, cb)
	}
	return c
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

// coverMeta is called by the guest's InitHook once per instrumented package.
func coverMeta(inc *incarnation, m api.Memory, s []uint64) uint32 {
	if inc.cov == nil {
		inc.cov = &incCoverage{}
	}
	p := coverPkg{blob: u32(s, 0), blobLen: u32(s, 1), path: readString(m, u32(s, 3), u32(s, 4)),
		pkgID: int32(u32(s, 5)), mode: uint8(u32(s, 6)), gran: uint8(u32(s, 7))}
	copy(p.hash[:], readBytes(m, u32(s, 2), 16))
	inc.cov.pkgs = append(inc.cov.pkgs, p)
	return 0
}

// coverCounters is called by the guest's InitHook once per counter array.
func coverCounters(inc *incarnation, m api.Memory, s []uint64) uint32 {
	if inc.cov == nil {
		inc.cov = &incCoverage{}
	}
	inc.cov.regions = append(inc.cov.regions, [2]uint32{u32(s, 0), u32(s, 1)})
	return 0
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
	acc := inc.w.cov.binary(key, cover.ModeName(mode))
	for _, r := range c.regions {
		data, ok := m.Read(r[0], r[1]*4)
		if !ok {
			continue
		}
		visitCounters(data, c.pkgs, acc.add)
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
// (CoverageMetaPath), where whoever renders the coverage finds it: the sweep's parent
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
	p := CoverageMetaPath(key)
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

// CoverageMetaPath is where seedfall keeps the meta-data file of the binary with this
// meta hash (Go's covmeta.<hash>).
func CoverageMetaPath(hash string) string {
	return filepath.Join(CacheDir(), "covmeta", "covmeta."+hash)
}

// verifyCoverageBuild checks that a module built with coverage got the overlay.
func verifyCoverageBuild(wasm []byte) error {
	ims, err := overlay.Imports(wasm)
	if err != nil {
		return err
	}
	names := make([]string, len(ims))
	for i, im := range ims {
		names[i] = im.String()
	}
	return cover.VerifyBuild(names)
}
