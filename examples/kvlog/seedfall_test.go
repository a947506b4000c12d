// Tests of the kvlog example that run natively, without the simulator: the server and
// the client as real processes over real TCP and real files. The recovery logic itself
// is tested in package kvstore.
package kvlog_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/examples/exampletest"
	"github.com/seedfall/seedfall/sim"
)

var serverBin, clientBin string

// TestMain builds the server and the client once for all tests.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(exampletest.Main(m)) // the tests skip themselves
	}
	bin, err := os.MkdirTemp("", "kvlog-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	serverBin, clientBin = filepath.Join(bin, "server"), filepath.Join(bin, "client")
	code := 2
	if err := build(serverBin, "./server"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else if err := build(clientBin, "./client"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = exampletest.Main(m)
	}
	os.RemoveAll(bin)
	os.Exit(code)
}

func build(out, pkg string) error {
	b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server and the client as processes")
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := sim.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn
}

// startServer starts the server over dir and waits until it serves; it returns the
// process, its address and its stdout so far.
func startServer(t *testing.T, bin, addr, dir string, args ...string) (*exec.Cmd, string, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", addr, "-dir", dir}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(stdout)
	var seen strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("server exited before serving: %v; output:\n%s", err, seen.String())
		}
		seen.WriteString(line)
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "serving on "); ok {
			go io.Copy(io.Discard, r)
			return cmd, a, seen.String()
		}
	}
}

// startClient starts the workload against the server at addr, with its stdout piped
// into lines.
func startClient(t *testing.T, bin, addr string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "SEEDFALL_ADDR_server="+addr)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines
}

// waitFor reads lines until one starts with prefix and returns everything read.
func waitFor(t *testing.T, lines <-chan string, prefix string) []string {
	t.Helper()
	var got []string
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("client output ended before a line starting %q:\n%s", prefix, strings.Join(got, "\n"))
			}
			got = append(got, l)
			if strings.HasPrefix(l, prefix) {
				return got
			}
		case <-timeout:
			t.Fatalf("no line starting %q within 60s:\n%s", prefix, strings.Join(got, "\n"))
		}
	}
}

// TestClientPassesAcrossRestart kills the server while the client runs and restarts it
// over the same log: the client retries, finds every acknowledged write and exits 0.
func TestClientPassesAcrossRestart(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	srv, addr, _ := startServer(t, serverBin, "127.0.0.1:0", dir)
	client, lines := startClient(t, clientBin, addr)

	waitFor(t, lines, "10 puts acknowledged")
	srv.Process.Kill()
	srv.Wait()
	_, _, out := startServer(t, serverBin, addr, dir)
	if !strings.HasPrefix(out, "recovered ") || strings.HasPrefix(out, "recovered 0 records") {
		t.Errorf("restarted server printed %q, want it to recover records", out)
	}

	got := waitFor(t, lines, "ok: ")
	if err := client.Wait(); err != nil {
		t.Fatalf("client: %v; output:\n%s", err, strings.Join(got, "\n"))
	}
}

// TestClientCatchesLostWrite is the negative control: the log is deleted while the
// server is down, so acknowledged writes are gone and the client must say so and
// exit 1.
func TestClientCatchesLostWrite(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	srv, addr, _ := startServer(t, serverBin, "127.0.0.1:0", dir)
	client, lines := startClient(t, clientBin, addr)

	waitFor(t, lines, "10 puts acknowledged")
	srv.Process.Kill()
	srv.Wait()
	if err := os.Remove(filepath.Join(dir, "kv.log")); err != nil {
		t.Fatal(err)
	}
	startServer(t, serverBin, addr, dir)

	got := waitFor(t, lines, "acknowledged write lost: ")
	last := got[len(got)-1]
	if !strings.HasSuffix(last, `server now answers "NONE"`) {
		t.Errorf("client reported %q, want the lost key and the NONE answer", last)
	}
	err := client.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("client exit: %v, want exit status 1", err)
	}
}

// TestServerProtocol speaks the line protocol to the server directly.
func TestServerProtocol(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	_, addr, _ := startServer(t, serverBin, "127.0.0.1:0", dir)
	conversation := []struct{ req, want string }{
		{"GET a", "NONE"},
		{"PUT a hello world", "OK"},
		{"GET a", "VAL hello world"},
		{"PUT a 2", "OK"},
		{"GET a", "VAL 2"},
		{"PUT a", "ERR usage: PUT key value"},
		{"FROB", "ERR unknown command"},
	}
	var in bytes.Buffer
	for _, c := range conversation {
		in.WriteString(c.req + "\n")
	}
	conn := dial(t, addr)
	defer conn.Close()
	if _, err := conn.Write(in.Bytes()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	for _, c := range conversation {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", c.req, err)
		}
		if got := strings.TrimSuffix(line, "\n"); got != c.want {
			t.Errorf("%s -> %q, want %q", c.req, got, c.want)
		}
	}
}

// The simulation test of simtest/ (package simtest) finds the torn-tail bug as
// seedfall.json does; its replay command replays it; shrink, cause, crashes and explore take
// the test where they take a config; the fixed recovery passes, traces identical.
func TestSimulationTest(t *testing.T) {
	const test = "^TestTornTail$"
	code, out := exampletest.Run(t, "test", "./simtest", "-run", test, "-seeds", "1-40", "-stop-on-fail", "-workers", "2", "-q")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ", "replay: seedfall test ./simtest -run '^TestTornTail$' -seed ")
	m := regexp.MustCompile(`replay: seedfall test \./simtest -run '\^TestTornTail\$' -seed (\d+)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no replay command:\n%s", out)
	}
	seed := m[1]
	code, again := exampletest.Run(t, "test", "./simtest", "-run", test, "-seed", seed, "-q")
	exampletest.WantFail(t, code, again, "FAIL seed "+seed+" ", "acknowledged write lost: ")

	plan := filepath.Join(t.TempDir(), "plan.json")
	code, out = exampletest.Run(t, "shrink", "-test", "./simtest", "-run", test, "-seed", seed, "-o", plan, "-workers", "2")
	if !strings.Contains(out, "minimal plan saved to "+plan) || !strings.Contains(out, "seedfall test ./simtest -run '^TestTornTail$' -seed "+seed+" -faults "+plan) {
		t.Fatalf("shrink (exit %d):\n%s", code, out)
	}
	code, out = exampletest.Run(t, "test", "./simtest", "-run", test, "-seed", seed, "-faults", plan, "-q")
	exampletest.WantFail(t, code, out, "acknowledged write lost: ")
	code, out = exampletest.Run(t, "cause", "-test", "./simtest", "-run", test, "-seed", seed, "-futures", "4", "-moments", "4", "-workers", "2")
	if !strings.Contains(out, "biggest jump:") {
		t.Fatalf("cause (exit %d):\n%s", code, out)
	}
	code, out = exampletest.Run(t, "crashes", "-test", "./simtest", "-run", test, "-seed", "1", "-own-faults=false", "-ops", "30-33", "-out", t.TempDir(), "-workers", "2")
	if !strings.Contains(out, "VULNERABLE kvlog/kvstore/kvstore.go:") || !strings.Contains(out, "replay: seedfall test ./simtest -run '^TestTornTail$' -seed 1 -faults ") {
		t.Fatalf("crashes (exit %d):\n%s", code, out)
	}
	code, out = exampletest.Run(t, "explore", "-test", "./simtest", "-run", test, "-runs", "40", "-workers", "2", "-plans", t.TempDir())
	if !strings.Contains(out, "40 runs in") || strings.Contains(out, "FAIL seed") && !strings.Contains(out, "replay: seedfall test ./simtest -run '^TestTornTail$' -seed ") {
		t.Fatalf("explore (exit %d):\n%s", code, out)
	}
	// -run must name one test for the commands that take one.
	code, out = exampletest.Run(t, "shrink", "-test", "./simtest", "-run", "TornTail", "-seed", "1")
	if code != 2 || !strings.Contains(out, "matches 2 simulation tests (TestTornTail, TestTornTailFixed); name one") {
		t.Fatalf("shrink of two tests: exit %d:\n%s", code, out)
	}

	code, out = exampletest.Run(t, "test", "./simtest", "-run", "^TestTornTailFixed$", "-seeds", exampletest.Seeds("1-10", "1-300"), "-check", "-workers", "2", "-q")
	exampletest.WantPass(t, code, out)
	if !strings.Contains(out, "traces identical") {
		t.Fatalf("-check did not compare:\n%s", out)
	}
}
