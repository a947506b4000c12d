package queuecheck

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// Queue is what a queue example's server puts behind the protocol: a library under test.
type Queue interface {
	// Publish stores payload durably, or returns an error; the client is told OK only
	// after Publish returned nil.
	Publish(payload string) error
	// Next takes the next message off the queue: ok is false when there is none.
	Next() (payload string, ok bool, err error)
}

// Serve accepts connections on ln and answers the protocol of this package from q, one
// request at a time across connections, so that a NEXT never takes a message another
// connection published while it waited.
func Serve(ln net.Listener, q Queue) error {
	var mu sync.Mutex
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go serveConn(q, &mu, conn)
	}
}

func serveConn(q Queue, mu *sync.Mutex, conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		mu.Lock()
		reply := handle(q, strings.TrimSuffix(line, "\n"))
		mu.Unlock()
		if _, err := io.WriteString(conn, reply); err != nil {
			return
		}
	}
}

func handle(q Queue, line string) string {
	cmd, arg, _ := strings.Cut(line, " ")
	switch cmd {
	case "PUB":
		if arg == "" {
			return "ERR usage: PUB payload\n"
		}
		if err := q.Publish(arg); err != nil {
			return "ERR " + oneLine(err) + "\n"
		}
		return "OK\n"
	case "NEXT":
		p, ok, err := q.Next()
		switch {
		case err != nil:
			return "ERR " + oneLine(err) + "\n"
		case !ok:
			return "EMPTY\n"
		}
		return "MSG " + strconv.Quote(p) + "\n"
	}
	return "ERR unknown command\n"
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }
