// Package simdecl is what a simulation test (package simtest) declares, as the test
// binary prints it for `seedfall test` to derive the test's config: the contract between
// the two sides.
package simdecl

import "encoding/json"

// RoleEnv is the environment variable that tells an instance of a test binary what to
// play: RoleDescribe, "node:<name>" or RoleWorkload. Unset: the test runs natively, as
// under go test.
const RoleEnv = "SEEDFALL_SIMTEST"

// Roles of an instance.
const (
	RoleDescribe   = "describe"
	RoleWorkload   = "workload"
	RoleNodePrefix = "node:"
)

// Marker starts the line on which a describing instance prints one test's Test.
const Marker = "seedfall-simtest: "

// Port is the port every node of a simulation test serves its handlers on.
const Port = 7070

// Test is one simulation test's declaration.
type Test struct {
	Name  string `json:"name"`
	Nodes []Node `json:"nodes"`
	// Workload reports whether the test declared one.
	Workload bool `json:"workload"`
	// Faults is the test's simtest.Faults, in the config's JSON.
	Faults json.RawMessage `json:"faults,omitempty"`
	// HorizonNS is the run's horizon (0: the config's default).
	HorizonNS  int64 `json:"horizon_ns,omitempty"`
	StrictDirs bool  `json:"strict_dirs,omitempty"`
	// MemoryLimitMiB caps each instance's memory (the config's memory_limit_mib; 0: its
	// default).
	MemoryLimitMiB  int    `json:"memory_limit_mib,omitempty"`
	Linearizability string `json:"linearizability,omitempty"` // a Porcupine model: "kv" or "register"
	// Patches are unified diffs, relative to the test's package directory, applied to
	// the dependencies of every instance of the test binary.
	Patches []string `json:"patches,omitempty"`
	// Schedule is the test's fixed scenario of faults (simtest.Schedule), the config's
	// "schedule".
	Schedule json.RawMessage `json:"schedule,omitempty"`
	// Errors are what is wrong with the declaration (two nodes of one name, no
	// workload): seedfall test refuses the test with them.
	Errors []string `json:"errors,omitempty"`
}

// Node is one node: a function of the test (Pkg empty) or a main package of the user's
// module (Pkg, relative to the test's package directory, with its Args, Patches and
// NetOverlay).
type Node struct {
	Name       string   `json:"name"`
	Pkg        string   `json:"pkg,omitempty"`
	Args       []string `json:"args,omitempty"`
	Patches    []string `json:"patches,omitempty"`
	NetOverlay bool     `json:"net_overlay,omitempty"`
}
