package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
)

// Provenance says what produced a result, a fault plan or a baseline: seedfall's
// version and Behaviour, the Go toolchain that built the guests and a hash of each
// node's wasm. A replay reproduces a run exactly with the same Behaviour, Go release and
// node code; `seedfall replay` warns when the first two differ (see Behaviour). It is
// not part of a run's identity (the trace hash).
type Provenance struct {
	// Config is the config file as the command was given it (for replay commands).
	Config string `json:"config,omitempty"`
	// Faults is the fault plan file a single replay applied (`replay -json`), as given;
	// empty for a sweep's results, whose seeds draw their own faults.
	Faults string `json:"faults,omitempty"`
	// WorkDir is the absolute working directory Config is relative to, recorded in
	// results files so that a report rendered elsewhere can name the config from where
	// its reader stands; plans leave it out (ForPlan).
	WorkDir  string `json:"work_dir,omitempty"`
	Seedfall string `json:"seedfall"`
	// Behaviour is the engine's Behaviour when the run was made (0 in files written
	// before it was recorded: read as 1, the first).
	Behaviour int    `json:"behaviour,omitempty"`
	Go        string `json:"go"`
	// Wasm maps each node to the SHA-256 of its module (the first 12 bytes, in hex).
	Wasm map[string]string `json:"wasm"`
	// Upgrade, in results of a sweep that made another revision the old build of the
	// config's upgrading nodes (-upgrade-from, the Action's upgrade-from), says which
	// build wrote the data and which read it: "upgrade (server): data written by base
	// 3f2a1c0, read by this PR's build 9e8d7c6". seedfall report and merge keep it.
	Upgrade string `json:"upgrade,omitempty"`
	// UpgradeFrom is that revision, for replay commands (-upgrade-from).
	UpgradeFrom string `json:"upgrade_from,omitempty"`
	// CrashPlacement is the placement the seeds' mid-op crashes were drawn with
	// (faults.crash_placement: "spread", or "next_op", the only one before seedfall's
	// fault draws changed); empty when the config draws no mid-op crash. A seed names
	// the same run only under the same placement: the Action does not take a seed
	// recorded under another one that passes now as a fix. A plan pins every crash that
	// fired to its op, so it replays alike under either.
	CrashPlacement string `json:"crash_placement,omitempty"`
}

// Version is seedfall's version: the module version it was installed at (a tag, or
// the pseudo-version Go 1.24+ stamps from a checkout's commit, "+dirty" with local
// changes), else the VCS revision it was built from, else, when the build recorded
// neither (-buildvcs=false, a git worktree, `go run`), "devel+exe-" and a hash of the
// executable, which still tells one build from another.
func Version() string {
	versionOnce.Do(func() {
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			bi = nil
		}
		version = versionFrom(bi, executableHash)
	})
	return version
}

var (
	versionOnce sync.Once
	version     string
)

// versionFrom is Version for build info bi (nil when the binary has none); exeHash is
// called only when bi records neither a module version nor a VCS revision.
func versionFrom(bi *debug.BuildInfo, exeHash func() string) string {
	if bi != nil {
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
	}
	if h := exeHash(); h != "" {
		return "devel+exe-" + h
	}
	return "devel"
}

// executableHash is the first 6 bytes of the SHA-256 of the running executable, in
// hex; "" when it cannot be read.
func executableHash() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil)[:6])
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

// Behaviour numbers what the engine does with a seed and a plan: the faults a seed
// draws, where they land, what the simulated disk, network and clock do. It goes up by
// one with a change that makes some seed or plan run otherwise (`.ci/tracehashes
// compare` shows differences that are not explained by the guests' own code), and only
// then: a plan recorded under another Behaviour, or with another Go release, warns when
// it is replayed; one recorded by another seedfall binary of the same Behaviour does
// not. Each node's wasm hash is recorded beside it but warns of nothing: it changes with
// the checkout's path, and a node whose code changed shows in the replay itself.
const Behaviour = 1

// BehaviourOf is p's Behaviour, 1 for a file written before it was recorded.
func BehaviourOf(p *Provenance) int {
	if p == nil || p.Behaviour == 0 {
		return 1
	}
	return p.Behaviour
}

// Provenance describes this Sim's build; config is the config path to record.
func (s *Sim) Provenance(config string) *Provenance {
	p := &Provenance{Config: config, Seedfall: Version(), Behaviour: Behaviour, Go: toolchainVersion(s.cfg.Dir), Wasm: map[string]string{},
		CrashPlacement: s.cfg.Faults.drawnPlacement()}
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
