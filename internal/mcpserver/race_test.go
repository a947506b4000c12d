//go:build race

package mcpserver_test

// raceEnabled builds the seedfall binary under test with the race detector when the
// tests run with it (go test -race), so the server is checked too, not only the client.
const raceEnabled = true
