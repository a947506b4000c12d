package ci

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seedfall/seedfall/report"
)

// TestLocate maps guest positions to the repository's files through go.mod: the module
// in a subdirectory of the workspace, a panic's frame in the reason first, then the
// last disk operation, then the failing node; dependencies, ambiguous short paths and
// nested modules stay unmapped.
func TestLocate(t *testing.T) {
	ws := t.TempDir()
	mod := filepath.Join(ws, "services", "kv")
	for _, f := range []string{"go.mod", "seedfall.json", "store/log.go", "cmd/server/main.go", "a/x/util.go", "q/a/x/util.go", "vendor/dep/x/y.go", "nested/sub/z.go", "nested/go.mod"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(mod, f)), 0o755))
		body := "package x\n"
		switch f {
		case "go.mod":
			body = "// the service\nmodule example.com/kv // trailing comment\n\ngo 1.26\n"
		case "nested/go.mod":
			body = "module example.com/kv/nested\n"
		}
		must(t, os.WriteFile(filepath.Join(mod, f), []byte(body), 0o644))
	}
	l, err := newLocator(ws, filepath.Join(mod, "seedfall.json"))
	must(t, err)
	loc := func(g report.Group) string {
		m, frame := l.locate(g)
		if m == nil {
			return "none (" + frame + ")"
		}
		return m.String()
	}
	for _, tc := range []struct {
		name string
		g    report.Group
		want string
	}{
		{"panic frame in the reason", report.Group{Reason: "server#2 crashed: panic: nil map\n\tkv/store/log.go:41 +0x1d", Trace: []string{"1s server#2 disk #3 write /d @0+1 at server/cmd/server/main.go:9"}}, "services/kv/store/log.go:41"},
		{"last disk op", report.Group{Reason: "client#1: lost k1=v2", Trace: []string{
			"1s server#1 disk #3 write /d @0+1 at kv/store/log.go:10",
			"2s server#1 disk #4 fsync /d at kv/store/log.go:12",
			"3s client#1 dial server:7000 at server/cmd/server/main.go:5",
		}}, "services/kv/store/log.go:12"},
		{"failing node", report.Group{Reason: "client#1: lost", Trace: []string{
			"1s server#1 listen :7000 at kv/store/log.go:3",
			"2s client#1 dial server:7000 at server/cmd/server/main.go:5",
		}}, "services/kv/cmd/server/main.go:5"},
		{"dependency stays in the text", report.Group{Reason: "client#1: lost", Trace: []string{"2s client#1 read at golang.org/x/net/conn.go:7"}}, "none (golang.org/x/net/conn.go:7)"},
		{"ambiguous short path", report.Group{Reason: "x", Trace: []string{"1s n#1 disk #1 write /d at a/x/util.go:3"}}, "none (a/x/util.go:3)"},
		{"vendored and nested modules are not indexed", report.Group{Reason: "x", Trace: []string{"1s n#1 disk #1 write /d at dep/x/y.go:3", "1s n#1 disk #2 write /d at nested/sub/z.go:4"}}, "none (nested/sub/z.go:4)"},
		{"no positions", report.Group{Reason: "x"}, "none ()"},
	} {
		if got := loc(tc.g); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// The module outside the workspace maps nothing, and says why.
	if _, err := newLocator(filepath.Join(mod, "store"), filepath.Join(mod, "seedfall.json")); err == nil {
		t.Error("a module outside the workspace was indexed")
	}
}
