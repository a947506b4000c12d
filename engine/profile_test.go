package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileDoesNotShapeRun: a profiled run has the same trace as an unprofiled one, on
// a seed with crashes and restarts.
func TestProfileDoesNotShapeRun(t *testing.T) {
	s := benchSim(t, "../examples/kvlog/seedfall.json")
	for _, seed := range []uint64{2, 3} {
		p := newProfiler(s)
		a := s.run(context.Background(), seed, RunOptions{Trace: true}, p)
		b := s.Run(context.Background(), seed, RunOptions{Trace: true})
		if d := diverge(a.Trace, b.Trace); d != nil || a.TraceHash != b.TraceHash {
			t.Fatalf("seed %d: profiled and unprofiled traces differ: %+v", seed, d)
		}
		if len(p.samples) == 0 || a.Stats.Incarnations < 2 {
			t.Fatalf("seed %d: %d samples, %d incarnations", seed, len(p.samples), a.Stats.Incarnations)
		}
	}
}

// TestProfilePprofReadable writes a profile of kvlog runs and reads it back with
// go tool pprof: guest Go stacks per node, host frames, the world.
func TestProfilePprofReadable(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go tool pprof needs the go command: ", err)
	}
	s := benchSim(t, "../examples/kvlog/seedfall.json")
	p := newProfiler(s)
	for seed := uint64(1); seed <= 3; seed++ {
		s.run(context.Background(), seed, RunOptions{}, p)
	}
	path := filepath.Join(t.TempDir(), "kvlog.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	out, err := exec.Command(gobin, "tool", "pprof", "-traces", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -traces: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"Type: time", "[node] server", "[node] client", "[host] fd_write", "[host] instantiate",
		"[seedfall] world", "kvstore.(*Store).append", "kvcheck.(*client).put", "runtime.main"} {
		if !strings.Contains(text, want) {
			t.Errorf("pprof -traces lacks %q", want)
		}
	}
	// Each stack belongs to one node, decoded with that node's symbol table: kvstore is
	// the server's, the client's request loop the client's.
	blocks := strings.Split(text, "-----------+-------------------------------------------------------")
	var server, client int
	for _, b := range blocks {
		switch {
		case strings.Contains(b, "[node] client"):
			client++
			if strings.Contains(b, "kvstore.") || strings.Contains(b, "[node] server") {
				t.Fatalf("a client stack with server frames:\n%s", b)
			}
		case strings.Contains(b, "[node] server"):
			server++
			if strings.Contains(b, "main.(*client)") {
				t.Fatalf("a server stack with client frames:\n%s", b)
			}
		}
	}
	if server < 5 || client < 5 {
		t.Fatalf("%d server and %d client stacks:\n%s", server, client, text)
	}

	// The values add up: -top's total is the sum of every sample's time.
	top, err := exec.Command(gobin, "tool", "pprof", "-top", "-sample_index=count", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top: %v\n%s", err, top)
	}
	if !strings.Contains(string(top), "[host] clock_time_get") {
		t.Errorf("pprof -top (count) lacks the clock calls:\n%s", top)
	}

	// pprof's own views work as typed, from anywhere (issue 35 point 2): -list finds the
	// guest's source (the config's module and the standard library) without
	// -trim_path or -source_path, no view says the main binary is not available, and
	// the same function in two nodes stays two graph nodes.
	elsewhere := t.TempDir()
	pprof := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gobin, append(append([]string{"tool", "pprof"}, args...), path)...)
		cmd.Dir = elsewhere
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
		}
		if strings.Contains(string(out), "Main binary filename not available") {
			t.Errorf("go tool pprof %v says: Main binary filename not available", args)
		}
		return string(out)
	}
	list := pprof("-list", `kvstore.\(\*Store\).append`)
	if strings.Contains(list, "could not find file") || !strings.Contains(list, "s.f.Write(rec)") {
		t.Errorf("pprof -list of kvstore's append does not show its source:\n%s", list)
	}
	if std := pprof("-list", `^runtime\.main \(server\)$`); strings.Contains(std, "could not find file") || !strings.Contains(std, filepath.Join("src", "runtime", "proc.go")) || !strings.Contains(std, "fn()") {
		t.Errorf("pprof -list runtime.main does not show the standard library's source:\n%s", std)
	}
	top = []byte(pprof("-top", "-nodecount=1000"))
	for _, want := range []string{"main.main (server)", "main.main (client)", "runtime.main (server)", "runtime.main (client)"} {
		if !strings.Contains(string(top), want) {
			t.Errorf("pprof -top lacks %q: one node's functions merged with another's", want)
		}
	}
}

// TestProfileSourcesResolve: the file names -trimpath builds record map to files here:
// a package of the module by its import path, a dependency's module@version path by
// its package's directory; what is unknown stays as recorded.
func TestProfileSourcesResolve(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"app/kv/kv.go", "wal/wal.go"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	ps := &profileSources{dirs: map[string]string{
		"example.com/app/kv":     filepath.Join(dir, "app", "kv"),
		"github.com/tidwall/wal": filepath.Join(dir, "wal"),
	}}
	for in, want := range map[string]string{
		"example.com/app/kv/kv.go":              filepath.Join(dir, "app", "kv", "kv.go"),
		"github.com/tidwall/wal@v1.1.7/wal.go":  filepath.Join(dir, "wal", "wal.go"),
		"github.com/tidwall/wal@v1.1.7/gone.go": "github.com/tidwall/wal@v1.1.7/gone.go",
		"other.org/x/y.go":                      "other.org/x/y.go",
		"":                                      "",
	} {
		if got := ps.resolve(in); got != want {
			t.Errorf("resolve(%q) = %q, want %q", in, got, want)
		}
	}
}
