// Command web is a guest of the engine's network tests: "server DELAY" serves net/http
// on sim.Listen(":8080") after DELAY; "client" asks it over a transport that dials with
// sim.Dial, and prints what happened.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	switch os.Args[1] {
	case "server":
		d, err := time.ParseDuration(os.Args[2])
		if err != nil {
			panic(err)
		}
		time.Sleep(d)
		ln, err := sim.Listen("tcp", ":8080")
		if err != nil {
			panic(err)
		}
		fmt.Println("listening")
		err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello %s from %s#%d", r.URL.Path, sim.Node(), sim.Incarnation())
		}))
		fmt.Printf("serve: %v\n", err)
		os.Exit(1)
	case "client":
		client()
	}
}

func client() {
	start := time.Now()
	_, err := sim.Dial("tcp", "server:8080")
	fmt.Printf("dial before listen: refused %v\n", errors.Is(err, syscall.ECONNREFUSED))
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return sim.Dial(network, addr)
		},
	}}
	get := func(path string) string {
		resp, err := c.Get("http://server:8080" + path)
		if err != nil {
			return "error " + err.Error()
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return "read error " + err.Error()
		}
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	for {
		a := get("/one")
		if a[0] != 'e' {
			fmt.Printf("GET /one: %s\n", a)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The tests' partition runs from 1s to 3s: this request starts inside it.
	time.Sleep(1500*time.Millisecond - time.Since(start))
	t0 := time.Now()
	a := get("/two")
	fmt.Printf("GET /two: %s took %s\n", a, time.Since(t0).Round(time.Millisecond))
	fmt.Println("client done")
}
