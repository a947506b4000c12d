package simtestcfg

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestScan: the simulation tests of a directory are the Test functions that reach
// simtest.Run, directly or through the package's own helpers, under any import name.
func TestScan(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a_test.go", `package a

import (
	"testing"

	st "github.com/seedfall/seedfall/simtest"
)

func TestDirect(t *testing.T)   { st.Run(t) }
func TestHelper(t *testing.T)   { variant(t, 1) }
func TestTwoDeep(t *testing.T)  { outer(t) }
func TestPlain(t *testing.T)    { t.Log("no simulation") }
func Testlower(t *testing.T)    { st.Run(t) }
func variant(t *testing.T, n int) { st.Run(t) }
func outer(t *testing.T)        { variant(t, 2) }
`)
	write("b_test.go", `package a_test

import (
	"testing"

	"github.com/seedfall/seedfall/simtest"
)

func TestExternal(t *testing.T) { simtest.Run(t) }
func TestRunOfAnother(t *testing.T) { other.Run(t) }
`)
	write("c_test.go", `package a

import "testing"

func TestNoImport(t *testing.T) { simtest.Run(t) }
`)
	got, err := scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TestDirect", "TestExternal", "TestHelper", "TestTwoDeep"}
	if !slices.Equal(got, want) {
		t.Errorf("scan: %q, want %q", got, want)
	}
	found, err := Find([]string{dir}, "Helper|Deep")
	if err != nil || len(found) != 1 || !slices.Equal(found[0].Tests, []string{"TestHelper", "TestTwoDeep"}) {
		t.Errorf("Find -run Helper|Deep: %+v, %v", found, err)
	}
	var ue *UsageError
	if _, err := Find([]string{dir}, "Nothing"); !errors.As(err, &ue) {
		t.Errorf("Find -run Nothing: %v, want a usage error", err)
	}
	write("d_test.go", "package a\nfunc (")
	if _, err := scan(dir); !errors.As(err, &ue) {
		t.Errorf("a test file that does not parse: %v, want a usage error", err)
	}
}
