package main

// What antithesis-go-instrumentor would generate: at init, every assertion of the
// program is declared with hit=false, so that one never evaluated is still reported.
// The SDK is used unchanged: these are its exported AssertRaw calls.

import "github.com/antithesishq/antithesis-sdk-go/assert"

func init() {
	const file = "workload/main.go"
	assert.AssertRaw(false, "server doubles", nil, "main", "main", file, 35, 3, false, true, "always", "Always", "server doubles")
	assert.AssertRaw(false, "workload sent a small number", nil, "main", "main", file, 36, 3, false, true, "sometimes", "Sometimes", "workload sent a small number")
	assert.AssertRaw(false, "answered count is negative", nil, "main", "main", file, 39, 3, false, true, "always", "Always", "answered count is negative")
	assert.AssertRaw(false, "workload answered a million requests", nil, "main", "main", file, 44, 3, false, true, "reachability", "Reachable", "workload answered a million requests")
	assert.AssertRaw(false, "workload finished", nil, "main", "main", file, 46, 2, false, true, "reachability", "Reachable", "workload finished")
}
