package cli

import (
	"fmt"
	"path/filepath"
	"sync"
)

// TestRef names a simulation test (package simtest) whose config `seedfall test`
// derived: the package as the user typed it, its directory, and the test's name.
type TestRef struct {
	Pkg, Dir, Name string
}

// Command is the `seedfall test` command that runs the test alone.
func (r TestRef) Command() string {
	return fmt.Sprintf("seedfall test %s -run '^%s$'", r.Pkg, r.Name)
}

var derivedTests sync.Map // derived config's absolute path -> TestRef

// RegisterTest records that the config at path was derived from test ref, so that the
// commands this process prints for it name the test, not the derived file.
func RegisterTest(path string, ref TestRef) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	derivedTests.Store(path, ref)
}

// TestOf returns the test the config at path was derived from, if it was.
func TestOf(path string) (TestRef, bool) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	v, ok := derivedTests.Load(path)
	if !ok {
		return TestRef{}, false
	}
	return v.(TestRef), true
}
