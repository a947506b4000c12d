// Package coverage is the coverage of the system under test that seedfall collects when
// a config asks for it (field "coverage"): the counters of a run or of many runs
// (Coverage, Merge, Sum), Go's coverage data format for `go tool covdata` (WriteDir),
// and statement coverage per package with the functions no run entered (Report).
//
// The engine fills Result.Coverage; the meta-data of each binary, which reading the
// counters needs, is kept in seedfall's cache (MetaPath).
package coverage

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/seedfall/seedfall/engine/internal/build"
	"github.com/seedfall/seedfall/engine/internal/cover"
)

// Coverage is the coverage of the system under test in one run (or, merged, in many):
// per binary, the counters of the functions that ran, summed over the incarnations.
// It is not part of the run's identity (the trace).
type Coverage struct {
	// Binaries are sorted by MetaHash.
	Binaries []Binary `json:"binaries"`
}

// Binary is the coverage of one built binary (nodes built alike share one).
type Binary struct {
	// MetaHash names Go's meta-data file of the binary, covmeta.<MetaHash>, which
	// seedfall keeps in its cache (MetaPath).
	MetaHash string `json:"meta_hash"`
	// Mode is the counter mode ("count").
	Mode string `json:"mode"`
	// Funcs are the functions with a non-zero counter, sorted by (Pkg, Func).
	Funcs []Func `json:"funcs"`
}

// Func is the counters of one function: Pkg indexes the packages of the
// binary's meta-data, Func the package's functions, Counters its coverable units.
type Func struct {
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

// Merge sums coverages (nil ones are skipped); it returns nil when all are nil.
// Counters saturate at the largest uint32.
func Merge(cs ...*Coverage) *Coverage {
	var acc Acc
	found := false
	for _, c := range cs {
		if c == nil {
			continue
		}
		found = true
		for _, b := range c.Binaries {
			a := acc.Binary(b.MetaHash, b.Mode)
			for _, f := range b.Funcs {
				a.Add(f.Pkg, f.Func, f.Counters)
			}
		}
	}
	if !found {
		return nil
	}
	return acc.Coverage()
}

// Acc accumulates coverage: per meta hash, per function, the summed counters. The
// engine fills one per run.
type Acc struct {
	bins map[string]*BinaryAcc
}

// BinaryAcc accumulates the coverage of one binary.
type BinaryAcc struct {
	mode  string
	funcs map[uint64][]uint32 // pkg<<32 | func
}

// Binary returns the accumulator of the binary with this meta hash and counter mode.
func (a *Acc) Binary(hash, mode string) *BinaryAcc {
	if a.bins == nil {
		a.bins = map[string]*BinaryAcc{}
	}
	b := a.bins[hash]
	if b == nil {
		b = &BinaryAcc{mode: mode, funcs: map[uint64][]uint32{}}
		a.bins[hash] = b
	}
	return b
}

// Add adds the counters of one function; sums saturate at the largest uint32.
func (b *BinaryAcc) Add(pkg, fn uint32, ctrs []uint32) {
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

// Coverage is what was accumulated, sorted.
func (a *Acc) Coverage() *Coverage {
	c := &Coverage{Binaries: []Binary{}}
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
		cb := Binary{MetaHash: h, Mode: b.mode, Funcs: make([]Func, 0, len(keys))}
		for _, k := range keys {
			cb.Funcs = append(cb.Funcs, Func{Pkg: uint32(k >> 32), Func: uint32(k), Counters: b.funcs[k]})
		}
		c.Binaries = append(c.Binaries, cb)
	}
	return c
}

// MetaPath is where seedfall keeps the meta-data file of the binary with this
// meta hash (Go's covmeta.<hash>).
func MetaPath(hash string) string {
	return filepath.Join(build.CacheDir(), "covmeta", "covmeta."+hash)
}

// Sum adds up coverages one at a time (a sweep's, as its results arrive).
// It is not safe for concurrent use.
type Sum struct {
	acc   Acc
	added bool
}

// Add adds c (nil is ignored).
func (s *Sum) Add(c *Coverage) {
	if c == nil {
		return
	}
	s.added = true
	for _, b := range c.Binaries {
		a := s.acc.Binary(b.MetaHash, b.Mode)
		for _, f := range b.Funcs {
			a.Add(f.Pkg, f.Func, f.Counters)
		}
	}
}

// Coverage is the sum so far; nil when nothing was added (or s is nil).
func (s *Sum) Coverage() *Coverage {
	if s == nil || !s.added {
		return nil
	}
	return s.acc.Coverage()
}

var (
	metaMu    sync.Mutex
	metaCache = map[string]*metaFile{}
)

// metaFile is a binary's meta-data file, read and decoded.
type metaFile struct {
	raw  []byte
	meta *cover.Meta
	pkgs []*cover.Package
}

// loadMeta reads the meta-data file of a binary from the cache, where the
// process that ran its first incarnation wrote it.
func loadMeta(hash string) (*metaFile, error) {
	metaMu.Lock()
	defer metaMu.Unlock()
	if m := metaCache[hash]; m != nil {
		return m, nil
	}
	p := MetaPath(hash)
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("coverage meta-data of binary %s: %w", hash, err)
	}
	meta, err := cover.DecodeMetaFile(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if meta.HashString() != hash {
		return nil, fmt.Errorf("%s: the file is of binary %s", p, meta.HashString())
	}
	m := &metaFile{raw: raw, meta: meta}
	for i, pk := range meta.Pkgs {
		d, err := cover.DecodePackage(pk.Blob)
		if err != nil {
			return nil, fmt.Errorf("%s: package %d: %w", p, i, err)
		}
		m.pkgs = append(m.pkgs, d)
	}
	metaCache[hash] = m
	return m, nil
}

// WriteDir writes c in Go's coverage data format into dir: per binary its
// meta-data file covmeta.<hash> and one counter file covcounters.<hash>.<n>.0, which
// `go tool covdata` (percent, func, textfmt, merge) reads and `go tool cover -html`
// renders after textfmt. A file of the same name is replaced.
func WriteDir(dir string, c *Coverage) error {
	if c == nil {
		return fmt.Errorf("no coverage: the config has no \"coverage\" field")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, b := range c.Binaries {
		m, err := loadMeta(b.MetaHash)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, m.meta.FileName()), m.raw, 0o644); err != nil {
			return err
		}
		funcs := make([]cover.FuncCounters, 0, len(b.Funcs))
		for _, f := range b.Funcs {
			funcs = append(funcs, cover.FuncCounters{Pkg: f.Pkg, Func: f.Func, Counters: f.Counters})
		}
		args := map[string]string{"GOOS": "wasip1", "GOARCH": "wasm", "argc": "1", "argv0": "seedfall"}
		data := cover.EncodeCounterFile(m.meta.Hash, args, funcs)
		if err := os.WriteFile(filepath.Join(dir, cover.CounterFileName(m.meta.Hash, 1)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Package is the statement coverage of one package, over every binary that
// contains it.
type Package struct {
	Path       string  `json:"path"`
	Statements int     `json:"statements"`
	Covered    int     `json:"covered"`
	Percent    float64 `json:"percent"`
}

// Unreached is a function of the system under test that no run entered.
type Unreached struct {
	Pkg  string `json:"pkg"`
	Func string `json:"func"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// Report is coverage read against the binaries' meta-data.
type Report struct {
	// Packages are sorted by path.
	Packages []Package `json:"packages"`
	// Unreached are the functions no run entered, by package, file and line (function
	// literals are left out: their enclosing function stands for them).
	Unreached []Unreached `json:"unreached_funcs"`
}

// Report reads the coverage against the binaries' meta-data: per package the share of
// statements that ran (as `go tool covdata percent` counts them: a unit's statements
// when its counter is non-zero), and the functions that never ran. A package built
// into several binaries (a library of the server and of the workload) counts a
// statement when it ran in any of them.
func (c *Coverage) Report() (*Report, error) {
	type pkgKey struct {
		path string
		hash [16]byte
	}
	type pkgState struct {
		desc *cover.Package
		hit  [][]bool // per function, per unit
	}
	pkgs := map[pkgKey]*pkgState{}
	var keys []pkgKey
	for _, b := range c.Binaries {
		m, err := loadMeta(b.MetaHash)
		if err != nil {
			return nil, err
		}
		states := make([]*pkgState, len(m.pkgs))
		for i, d := range m.pkgs {
			k := pkgKey{d.Path, d.Hash}
			st := pkgs[k]
			if st == nil {
				st = &pkgState{desc: d, hit: make([][]bool, len(d.Funcs))}
				for f, fn := range d.Funcs {
					st.hit[f] = make([]bool, len(fn.Units))
				}
				pkgs[k] = st
				keys = append(keys, k)
			}
			states[i] = st
		}
		for _, f := range b.Funcs {
			if int(f.Pkg) >= len(states) || int(f.Func) >= len(states[f.Pkg].hit) {
				return nil, fmt.Errorf("coverage of binary %s: function %d/%d is not in its meta-data", b.MetaHash, f.Pkg, f.Func)
			}
			hit := states[f.Pkg].hit[f.Func]
			for u, v := range f.Counters {
				if u < len(hit) && v != 0 {
					hit[u] = true
				}
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].path != keys[j].path {
			return keys[i].path < keys[j].path
		}
		return string(keys[i].hash[:]) < string(keys[j].hash[:])
	})
	r := &Report{Packages: []Package{}, Unreached: []Unreached{}}
	for _, k := range keys {
		st := pkgs[k]
		pc := Package{Path: k.path}
		for f, fn := range st.desc.Funcs {
			entered := false
			for u, unit := range fn.Units {
				pc.Statements += int(unit.NxStmts)
				if st.hit[f][u] {
					pc.Covered += int(unit.NxStmts)
					entered = true
				}
			}
			if !entered && !fn.Lit && len(fn.Units) > 0 {
				r.Unreached = append(r.Unreached, Unreached{Pkg: k.path, Func: fn.Name, File: fn.File, Line: int(fn.Units[0].StLine)})
			}
		}
		if pc.Statements > 0 {
			pc.Percent = 100 * float64(pc.Covered) / float64(pc.Statements)
		}
		r.Packages = append(r.Packages, pc)
	}
	sort.SliceStable(r.Unreached, func(i, j int) bool {
		a, b := r.Unreached[i], r.Unreached[j]
		if a.Pkg != b.Pkg {
			return a.Pkg < b.Pkg
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return r, nil
}
