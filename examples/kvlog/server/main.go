// Command server is the kvlog example's key-value server: a line protocol over TCP and
// one append-only log file on disk.
//
//	PUT key value\n  ->  OK\n
//	GET key\n        ->  VAL value\n  or  NONE\n
//
// Anything else, or a PUT that could not be stored, is answered with ERR and a reason.
//
// Flags select the variants the seedfall configs run: -recovery=buggy keeps appending
// after a torn tail (see kvstore.Open), and -ack-before-sync answers OK before the
// record is fsynced and syncs only every 10th write, a negative control that a sweep
// must catch.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/seedfall/seedfall/examples/kvlog/kvstore"
	"github.com/seedfall/seedfall/sim"
)

func main() {
	addr := flag.String("addr", ":7000", "`address` to listen on")
	dir := flag.String("dir", "/data", "`directory` of the log file kv.log")
	recovery := flag.String("recovery", "fixed", "recovery of a torn log tail: buggy or fixed")
	ackBeforeSync := flag.Bool("ack-before-sync", false, "answer OK before fsyncing, and fsync only every 10th write (negative control)")
	flag.Parse()
	if *recovery != "buggy" && *recovery != "fixed" {
		fmt.Fprintf(os.Stderr, "server: -recovery=%q: want buggy or fixed\n", *recovery)
		os.Exit(2)
	}
	if err := run(*addr, *dir, *recovery == "fixed", *ackBeforeSync); err != nil {
		fmt.Fprintf(os.Stderr, "server: %v\n", err)
		os.Exit(1)
	}
}

func run(addr, dir string, fixed, ackBeforeSync bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	store, err := kvstore.Open(filepath.Join(dir, "kv.log"), fixed)
	if err != nil {
		return err
	}
	defer store.Close()

	rec := store.Recovery()
	if rec.TornBytes > 0 {
		fmt.Printf("recovered %d records (torn tail: %d bytes)\n", rec.Records, rec.TornBytes)
	} else {
		fmt.Printf("recovered %d records\n", rec.Records)
	}
	// Reached on every start and true on some: a sweep in which it is never true did not
	// exercise the recovery path at all.
	sim.Sometimes(rec.TornBytes > 0, "recovery found a torn tail",
		map[string]any{"records": rec.Records, "torn_bytes": rec.TornBytes})
	sim.Always(rec.Malformed == 0, "replayed records are well-formed",
		map[string]any{"malformed": rec.Malformed})

	ln, err := sim.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if !sim.InSimulation() {
		// Inside the simulator the address reads ":0" (WASI has no getsockname).
		fmt.Printf("serving on %s\n", ln.Addr())
	}
	s := &server{store: store, ackBeforeSync: ackBeforeSync}
	for {
		conn, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("accept: %w", err)
		}
		go s.serve(conn)
	}
}

type server struct {
	store         *kvstore.Store
	ackBeforeSync bool
	writes        atomic.Int64
}

func (s *server) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return // the client went away; it retries on a new connection
		}
		reply, syncAfter := s.handle(strings.TrimSuffix(line, "\n"))
		_, err = io.WriteString(conn, reply)
		if syncAfter {
			// -ack-before-sync: the OK is already on its way; a sync error is only logged.
			if serr := s.store.Sync(); serr != nil {
				fmt.Fprintf(os.Stderr, "server: %v\n", serr)
			}
		}
		if err != nil {
			return
		}
	}
}

// handle answers one request line, without its newline. syncAfter asks the caller to
// sync the log once the reply is sent (-ack-before-sync only).
func (s *server) handle(line string) (reply string, syncAfter bool) {
	cmd, args, _ := strings.Cut(line, " ")
	switch cmd {
	case "PUT":
		key, value, ok := strings.Cut(args, " ")
		if !ok || key == "" {
			return "ERR usage: PUT key value\n", false
		}
		if s.ackBeforeSync {
			// The negative control: the record reaches only the page cache before OK,
			// and one write in 10 is synced, after its reply. An acknowledged write can
			// then vanish in a crash.
			if err := s.store.Append(key, value); err != nil {
				return "ERR " + oneLine(err) + "\n", false
			}
			return "OK\n", s.writes.Add(1)%10 == 0
		}
		if err := s.store.Put(key, value); err != nil { // durable before OK
			return "ERR " + oneLine(err) + "\n", false
		}
		return "OK\n", false
	case "GET":
		if args == "" || strings.Contains(args, " ") {
			return "ERR usage: GET key\n", false
		}
		if v, ok := s.store.Get(args); ok {
			return "VAL " + v + "\n", false
		}
		return "NONE\n", false
	}
	return "ERR unknown command\n", false
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }
