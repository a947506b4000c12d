package apisize

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestNamesCounts is the negative control of the API-size tests: the counter sees
// package funcs, constructors, methods and aliases, and not unexported names, methods
// of an unexported type or methods of an alias's target.
func TestNamesCounts(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import "time"

type T struct{}

func New() *T              { return nil }
func (T) M()               {}
func (*T) m()              {}
func F()                   {}
func f()                   {}
type A = time.Duration
type u int
func (u) Exported()        {}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Names(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"func (T) M", "func F", "func New", "type A", "type T"}
	if !slices.Equal(got, want) {
		t.Fatalf("counted %v, want %v", got, want)
	}
	if _, err := Names(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory: no error")
	}
}
