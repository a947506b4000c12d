package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/seedfall/seedfall/engine/internal/cover"
)

// CoverageSum adds up coverages one at a time (a sweep's, as its results arrive).
// It is not safe for concurrent use.
type CoverageSum struct {
	acc   coverAcc
	added bool
}

// Add adds c (nil is ignored).
func (s *CoverageSum) Add(c *Coverage) {
	if c == nil {
		return
	}
	s.added = true
	for _, b := range c.Binaries {
		a := s.acc.binary(b.MetaHash, b.Mode)
		for _, f := range b.Funcs {
			a.add(f.Pkg, f.Func, f.Counters)
		}
	}
}

// Coverage is the sum so far; nil when nothing was added (or s is nil).
func (s *CoverageSum) Coverage() *Coverage {
	if s == nil || !s.added {
		return nil
	}
	return s.acc.coverage()
}

var (
	metaMu    sync.Mutex
	metaCache = map[string]*coverageMeta{}
)

// coverageMeta is a binary's meta-data file, read and decoded.
type coverageMeta struct {
	raw  []byte
	meta *cover.Meta
	pkgs []*cover.Package
}

// loadCoverageMeta reads the meta-data file of a binary from the cache, where the
// process that ran its first incarnation wrote it.
func loadCoverageMeta(hash string) (*coverageMeta, error) {
	metaMu.Lock()
	defer metaMu.Unlock()
	if m := metaCache[hash]; m != nil {
		return m, nil
	}
	p := CoverageMetaPath(hash)
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
	m := &coverageMeta{raw: raw, meta: meta}
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

// WriteCoverageDir writes c in Go's coverage data format into dir: per binary its
// meta-data file covmeta.<hash> and one counter file covcounters.<hash>.<n>.0, which
// `go tool covdata` (percent, func, textfmt, merge) reads and `go tool cover -html`
// renders after textfmt. A file of the same name is replaced.
func WriteCoverageDir(dir string, c *Coverage) error {
	if c == nil {
		return fmt.Errorf("no coverage: the config has no \"coverage\" field")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, b := range c.Binaries {
		m, err := loadCoverageMeta(b.MetaHash)
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

// PackageCoverage is the statement coverage of one package, over every binary that
// contains it.
type PackageCoverage struct {
	Path       string  `json:"path"`
	Statements int     `json:"statements"`
	Covered    int     `json:"covered"`
	Percent    float64 `json:"percent"`
}

// UnreachedFunc is a function of the system under test that no run entered.
type UnreachedFunc struct {
	Pkg  string `json:"pkg"`
	Func string `json:"func"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// CoverageReport is coverage read against the binaries' meta-data.
type CoverageReport struct {
	// Packages are sorted by path.
	Packages []PackageCoverage `json:"packages"`
	// Unreached are the functions no run entered, by package, file and line (function
	// literals are left out: their enclosing function stands for them).
	Unreached []UnreachedFunc `json:"unreached_funcs"`
}

// Report reads the coverage against the binaries' meta-data: per package the share of
// statements that ran (as `go tool covdata percent` counts them: a unit's statements
// when its counter is non-zero), and the functions that never ran. A package built
// into several binaries (a library of the server and of the workload) counts a
// statement when it ran in any of them.
func (c *Coverage) Report() (*CoverageReport, error) {
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
		m, err := loadCoverageMeta(b.MetaHash)
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
	r := &CoverageReport{Packages: []PackageCoverage{}, Unreached: []UnreachedFunc{}}
	for _, k := range keys {
		st := pkgs[k]
		pc := PackageCoverage{Path: k.path}
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
				r.Unreached = append(r.Unreached, UnreachedFunc{Pkg: k.path, Func: fn.Name, File: fn.File, Line: int(fn.Units[0].StLine)})
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
