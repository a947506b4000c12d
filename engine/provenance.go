package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
)

// Provenance says what produced a result, a fault plan or a baseline: seedfall's
// version, the Go toolchain that built the guests and a hash of each node's wasm. A
// replay reproduces a run exactly only with the same three; `seedfall replay` warns when
// they differ. It is not part of a run's identity (the trace hash).
type Provenance struct {
	// Config is the config file as the command was given it (for replay commands).
	Config   string `json:"config,omitempty"`
	Seedfall string `json:"seedfall"`
	Go       string `json:"go"`
	// Wasm maps each node to the SHA-256 of its module (the first 12 bytes, in hex).
	Wasm map[string]string `json:"wasm"`
}

// Version is seedfall's version: the module version it was installed at, else the VCS
// revision it was built from ("+dirty" with local changes), else "devel".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		return "devel-" + rev[:min(12, len(rev))] + dirty
	}
	return "devel"
}

var goVersions sync.Map // config dir -> `go env GOVERSION`

// toolchainVersion is the version of the `go` command that builds guests from dir.
func toolchainVersion(dir string) string {
	if v, ok := goVersions.Load(dir); ok {
		return v.(string)
	}
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Dir = dir
	out, err := cmd.Output()
	v := strings.TrimSpace(string(out))
	if err != nil || v == "" {
		v = "unknown"
	}
	goVersions.Store(dir, v)
	return v
}

func wasmHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

// Provenance describes this Sim's build; config is the config path to record.
func (s *Sim) Provenance(config string) *Provenance {
	p := &Provenance{Config: config, Seedfall: Version(), Go: toolchainVersion(s.cfg.Dir), Wasm: map[string]string{}}
	all := s.cfg.AllNodes()
	for i, n := range all {
		if i < len(s.wasmHashes) {
			p.Wasm[n.Name] = s.wasmHashes[i]
		}
	}
	// The old builds of nodes with an upgrade follow the nodes' own (WasmPaths).
	for j, i := range upgradeNodes(s.cfg) {
		if k := len(all) + j; k < len(s.wasmHashes) {
			p.Wasm[all[i].Name+" (old build)"] = s.wasmHashes[k]
		}
	}
	return p
}

// Differences lists how q (what runs now) differs from p (what was recorded), one
// phrase each, sorted; nil when they match. The config path is not compared.
func (p *Provenance) Differences(q *Provenance) []string {
	if p == nil || q == nil {
		return nil
	}
	var out []string
	if p.Seedfall != q.Seedfall {
		out = append(out, fmt.Sprintf("seedfall %s, now %s", p.Seedfall, q.Seedfall))
	}
	if p.Go != q.Go {
		out = append(out, fmt.Sprintf("Go %s, now %s", p.Go, q.Go))
	}
	var nodes []string
	for n := range p.Wasm {
		nodes = append(nodes, n)
	}
	for n := range q.Wasm {
		if _, ok := p.Wasm[n]; !ok {
			nodes = append(nodes, n)
		}
	}
	sort.Strings(nodes)
	for _, n := range nodes {
		a, b := p.Wasm[n], q.Wasm[n]
		switch {
		case a == "":
			out = append(out, fmt.Sprintf("node %s is new", n))
		case b == "":
			out = append(out, fmt.Sprintf("node %s is gone", n))
		case a != b:
			out = append(out, fmt.Sprintf("node %s's wasm %s, now %s (its code or dependencies changed)", n, a, b))
		}
	}
	return out
}
