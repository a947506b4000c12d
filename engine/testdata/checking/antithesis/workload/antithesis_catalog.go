package main

// What antithesis-go-instrumentor would generate: at init, every assertion of the
// program is declared with hit=false, so that one never evaluated is still reported
// (as not reached). The SDK is used unchanged: these are its exported AssertRaw calls.

import "github.com/antithesishq/antithesis-sdk-go/assert"

func init() {
	const file = "workload/main.go"
	declare := func(message, assertType, displayType string, mustHit bool) {
		assert.AssertRaw(false, message, nil, "main", "main", file, 0, 0, false, mustHit, assertType, displayType, message)
	}
	declare("server doubles", "always", "Always", true)
	declare("workload sent a small number", "sometimes", "Sometimes", true)
	declare("answered count is negative", "always", "Always", true)
	declare("workload took the unreachable branch", "reachability", "Unreachable", false)
	declare("workload answered a million requests", "reachability", "Reachable", true)
	declare("workload finished", "reachability", "Reachable", true)
}
