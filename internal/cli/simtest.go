package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestOf returns the test the config at path was derived from, if it was: registered in
// this process, or recorded beside the config by the process that derived it
// (WriteTestRef), as when `seedfall report` renders the merged results of sharded jobs.
func TestOf(path string) (TestRef, bool) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if v, ok := derivedTests.Load(path); ok {
		return v.(TestRef), true
	}
	data, err := os.ReadFile(refFile(path))
	if err != nil {
		return TestRef{}, false
	}
	var ref TestRef
	if json.Unmarshal(data, &ref) != nil || ref.Name == "" || ref.Pkg == "" {
		return TestRef{}, false
	}
	derivedTests.Store(path, ref)
	return ref, true
}

// WriteTestRef records beside the derived config at path the test it was derived from,
// for TestOf in other processes.
func WriteTestRef(path string, ref TestRef) error {
	data, err := json.Marshal(ref)
	if err != nil {
		return err
	}
	// Whole or not at all: another process may read it while this one writes.
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*.test.json")
	if err != nil {
		return err
	}
	_, werr := f.Write(append(data, '\n'))
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), refFile(path)); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// refFile is where WriteTestRef records the test of the derived config at path
// (TestX.json: TestX.test.json).
func refFile(path string) string { return strings.TrimSuffix(path, ".json") + ".test.json" }
