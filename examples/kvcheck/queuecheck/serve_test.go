package queuecheck

import (
	"bufio"
	"errors"
	"net"
	"testing"
)

// fifo is an in-memory Queue whose Publish fails on "bad".
type fifo struct{ msgs []string }

func (f *fifo) Publish(p string) error {
	if p == "bad" {
		return errors.New("disk\nfull")
	}
	f.msgs = append(f.msgs, p)
	return nil
}

func (f *fifo) Next() (string, bool, error) {
	if len(f.msgs) == 0 {
		return "", false, nil
	}
	p := f.msgs[0]
	f.msgs = f.msgs[1:]
	return p, true, nil
}

func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go Serve(ln, &fifo{})
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, c := range []struct{ req, want string }{
		{"NEXT", "EMPTY\n"},
		{"PUB a b", "OK\n"},
		{"PUB \"q\"", "OK\n"},
		{"PUB", "ERR usage: PUB payload\n"},
		{"PUB bad", "ERR disk full\n"},
		{"NEXT", "MSG \"a b\"\n"},
		{"NEXT", "MSG \"\\\"q\\\"\"\n"},
		{"NEXT", "EMPTY\n"},
		{"GET k", "ERR unknown command\n"},
	} {
		if _, err := conn.Write([]byte(c.req + "\n")); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.req, got, c.want)
		}
	}
}
