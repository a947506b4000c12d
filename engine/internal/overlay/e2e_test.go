package overlay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
)

// The end-to-end test: an overlay-built guest under the stand-in host of
// e2e_host_test.go.

const e2eSrc = `package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

func check(what string, err error) {
	if err != nil {
		fmt.Println("FAIL", what, err)
		os.Exit(1)
	}
}

func main() {
	switch os.Getenv("SEEDFALL_NODE") {
	case "server":
		ln, err := net.Listen("tcp", ":7000")
		check("listen", err)
		fmt.Println("listening", ln.Addr())
		_, err = net.Listen("tcp", ":7000")
		fmt.Println("second listen in use:", errors.Is(err, syscall.EADDRINUSE))
		http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "pong %s", r.RemoteAddr)
		}))
	case "client":
		// First, an IP this guest never resolved: the host gets the IP.
		var c net.Conn
		var err error
		for i := 0; i < 100; i++ { // the server may not listen yet
			if c, err = net.Dial("tcp", os.Getenv("SERVER_ADDR")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		check("dial unresolved ip", err)
		fmt.Println("unresolved ip:", c.RemoteAddr())
		c.Close()

		client := &http.Client{Timeout: 5 * time.Second}
		resp, err := client.Get("http://server:7000/ping")
		check("get", err)
		b, err := io.ReadAll(resp.Body)
		check("read body", err)
		resp.Body.Close()
		fmt.Println("body:", string(b))
		resp, err = client.Get("http://server:7000/again")
		check("get again", err)
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println("body:", string(b))

		c, err = net.Dial("tcp", "server:7000")
		check("dial", err)
		fmt.Println("conn:", c.LocalAddr(), c.RemoteAddr())
		c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
		_, err = c.Read(make([]byte, 1))
		fmt.Println("deadline:", errors.Is(err, os.ErrDeadlineExceeded))
		c.Close()
		_, err = c.Read(make([]byte, 1))
		fmt.Println("closed:", errors.Is(err, net.ErrClosed))

		_, err = net.Dial("tcp", "server:7001")
		fmt.Println("refused:", errors.Is(err, syscall.ECONNREFUSED))
		_, err = net.Dial("tcp", "nosuch:7000")
		fmt.Println("unreachable:", errors.Is(err, syscall.EHOSTUNREACH))

		ips, err := net.LookupHost("server")
		check("lookup", err)
		c, err = net.Dial("tcp", net.JoinHostPort(ips[0], "7000"))
		check("dial ip", err)
		fmt.Println("by ip:", c.RemoteAddr())
		c.Close()
		names, err := net.LookupAddr(ips[0])
		check("lookup addr", err)
		fmt.Println("reverse:", names)
		fmt.Println("done")
	}
}
`

// TestE2EUnderStandInHost runs a server and a client guest, built with
// the overlay, over the stand-in host.
func TestE2EUnderStandInHost(t *testing.T) {
	ov := sharedOverlay(t)
	t0 := time.Now()
	wasm, err := buildWasip1(t, e2eSrc, ov)
	if err != nil {
		t.Fatal(err)
	}
	phases := fmt.Sprintf("build %v", time.Since(t0).Round(time.Millisecond))
	start := time.Now()
	defer func() { t.Logf("phases: %s", phases) }()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	tn := newTnet("server", "client")
	if _, err := tn.wasiModule(r).Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.hostModule(r).Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	compiled, err := r.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	run := func(node string) error {
		cfg := wazero.NewModuleConfig().WithName(node).WithArgs(node).
			WithEnv("SEEDFALL_NODE", node).WithEnv("SERVER_ADDR", NodeIP("server").String()+":7000").WithSysNanotime().WithSysWalltime().WithSysNanosleep()
		_, err := r.InstantiateModule(ctx, compiled, cfg)
		var exit *sys.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 0 {
			return nil
		}
		return err
	}
	phases += fmt.Sprintf(", compile %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	serverDone := make(chan error, 1)
	go func() { serverDone <- run("server") }()
	clientDone := make(chan error, 1)
	go func() { clientDone <- run("client") }()
	select {
	case err = <-clientDone:
	case <-time.After(60 * time.Second):
		err = errors.New("client did not finish in 60s")
	}
	phases += fmt.Sprintf(", client %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	tn.stop()
	serr := <-serverDone
	phases += fmt.Sprintf(", server stop %v", time.Since(start).Round(time.Millisecond))
	tn.mu.Lock()
	sout, cout := tn.stdout["server"].String(), tn.stdout["client"].String()
	dials := strings.Join(tn.dials, " ")
	tn.mu.Unlock()
	t.Logf("server:\n%s\nclient:\n%s\ndials: %s", sout, cout, dials)
	for _, want := range []string{"client->" + NodeIP("server").String() + ":7000", "client->server:7000", "client->server:7001", "client->nosuch:7000"} {
		if !strings.Contains(dials, want) {
			t.Errorf("host never got sock_dial %q", want)
		}
	}
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	if serr != nil {
		t.Errorf("server: %v", serr)
	}
	sip, cip := NodeIP("server"), NodeIP("client")
	for _, want := range []string{
		fmt.Sprintf("listening %s:7000", sip),
		"second listen in use: true",
	} {
		if !strings.Contains(sout, want) {
			t.Errorf("server output lacks %q", want)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("body: pong %s:", cip),
		fmt.Sprintf("conn: %s:", cip),
		fmt.Sprintf(" %s:7000\n", sip),
		"deadline: true",
		"closed: true",
		"refused: true",
		"unreachable: true",
		fmt.Sprintf("by ip: %s:7000", sip),
		"reverse: [server",
		fmt.Sprintf("unresolved ip: %s:7000", sip),
		"done",
	} {
		if !strings.Contains(cout, want) {
			t.Errorf("client output lacks %q", want)
		}
	}
}
