// Command wedge is a guest of the liveness tests: a tiny request/answer service whose
// server, when restarted after a crash, forgets to listen again unless -recover is
// given. Its client (the workload) retries a refused dial forever, so a crash wedges
// the run: the workload never finishes, and only a liveness check says so.
//
//	wedge server [-recover]
//	wedge client [-n requests]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wedge server|client [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	relisten := fs.Bool("recover", false, "server: listen again after a restart")
	n := fs.Int("n", 100, "client: requests to make")
	fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "server":
		server(*relisten)
	case "client":
		client(*n)
	default:
		fmt.Fprintf(os.Stderr, "wedge: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

func server(relisten bool) {
	if sim.Incarnation() > 1 && !relisten {
		// The bug: recovery never gets to the listen.
		fmt.Println("recovering")
		for {
			time.Sleep(time.Hour)
		}
	}
	ln, err := sim.Listen("tcp", ":7000")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Println("listening")
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				fmt.Fprintf(c, "ok %s\n", sc.Text())
			}
		}()
	}
}

func client(n int) {
	var rd *bufio.Reader
	var conn interface {
		Write([]byte) (int, error)
		Close() error
	}
	for i := 0; i < n; {
		if conn == nil {
			c, err := sim.Dial("tcp", "server:7000")
			if err != nil {
				fmt.Printf("dial: %v; retrying\n", err)
				time.Sleep(100 * time.Millisecond)
				continue
			}
			conn, rd = c, bufio.NewReader(c)
		}
		if _, err := fmt.Fprintf(conn, "req %d\n", i); err != nil {
			conn.Close()
			conn = nil
			continue
		}
		if _, err := rd.ReadString('\n'); err != nil {
			fmt.Printf("lost the connection: %v; retrying\n", err)
			conn.Close()
			conn = nil
			continue
		}
		i++
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("done: %d requests answered\n", n)
}
