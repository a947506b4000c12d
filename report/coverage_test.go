package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/coverage"
)

// TestHTMLCoverage: the report lists the packages' coverage and the functions no seed
// reached (escaped, as any text of the system under test); a report without coverage
// has no such section.
func TestHTMLCoverage(t *testing.T) {
	d := fixture()
	d.Coverage = &coverage.Report{
		Packages: []coverage.Package{{Path: "example.com/wal", Statements: 40, Covered: 30, Percent: 75}},
		Unreached: []coverage.Unreached{
			{Pkg: "example.com/wal", Func: "recoverTornTail", File: "example.com/wal/recover.go", Line: 88},
			{Pkg: "example.com/wal", Func: "<script>x</script>", File: "example.com/wal/x.go", Line: 3},
		},
	}
	html := string(render(t, func(b *bytes.Buffer) error { return HTML(b, d) }))
	for _, want := range []string{`id="coverage"`, "example.com/wal", "75.0%", "Functions no seed reached (2)", "recoverTornTail", "example.com/wal/recover.go:88", "&lt;script&gt;x&lt;/script&gt;"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>x</script>") {
		t.Errorf("an unreached function's name became markup")
	}
	plain := string(render(t, func(b *bytes.Buffer) error { return HTML(b, fixture()) }))
	if strings.Contains(plain, `id="coverage"`) {
		t.Errorf("a report without coverage has a coverage section")
	}
}
