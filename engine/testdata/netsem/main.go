// Command netsem prints how TCP connections behave at their edges: a writer to a peer
// that does not read, writes and reads after the peer closed (with and without unread
// data), and half-close in both directions. It uses plain net over loopback, so the
// same program runs natively on Linux and under seedfall (with net_overlay), and the
// engine's tests compare the two outputs line by line. It prints behaviour classes
// (ok, EOF, ECONNRESET, EPIPE, timeout), never byte counts that differ between the two.
package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"
)

func main() {
	backpressure()
	peerClosed()
	peerClosedReadFirst()
	unreadClose()
	unreadCloseWriteFirst()
	dataThenReset()
	halfClose()
	halfCloseReverse()
	closeRead()
	lingerZero()
	fmt.Println("done")
}

func class(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, io.EOF):
		return "EOF"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET):
		return "ECONNRESET"
	case errors.Is(err, syscall.EPIPE):
		return "EPIPE"
	}
	return "other: " + err.Error()
}

func fail(what string, err error) {
	fmt.Printf("%s: %v\n", what, err)
	os.Exit(1)
}

// pair returns the two ends of a fresh loopback connection: the dialer's and the
// acceptor's.
func pair() (c, s *net.TCPConn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail("listen", err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		a, err := ln.Accept()
		if err != nil {
			fail("accept", err)
		}
		ch <- a
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		fail("dial", err)
	}
	return d.(*net.TCPConn), (<-ch).(*net.TCPConn)
}

func read(c net.Conn) string {
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if n > 0 {
		return fmt.Sprintf("%q", buf[:n])
	}
	return class(err)
}

func write(c net.Conn, s string) string {
	_, err := c.Write([]byte(s))
	return class(err)
}

const settle = 50 * time.Millisecond // long enough for segments and resets to arrive

// pattern fills b with the stream's bytes from offset off.
func pattern(b []byte, off int) {
	for i := range b {
		b[i] = byte((off + i) % 251)
	}
}

// A writer to a peer that does not read fills the socket buffers and then blocks: with a
// deadline it times out, having written a bounded amount. When the peer reads, a write
// that blocked completes, and the peer gets every byte, in order.
func backpressure() {
	c, s := pair()
	const chunk = 64 << 10
	const limit = 64 << 20
	buf := make([]byte, chunk)
	total := 0
	c.SetWriteDeadline(time.Now().Add(time.Second))
	var err error
	for total < limit {
		pattern(buf, total)
		var n int
		n, err = c.Write(buf)
		total += n
		if err != nil {
			break
		}
	}
	fmt.Printf("backpressure: write to a peer that does not read: %s\n", class(err))
	fmt.Printf("backpressure: buffered some, at most 64 MiB: %v\n", total > 0 && total < limit)
	fmt.Fprintf(os.Stderr, "backpressure: %d bytes written before the timeout\n", total)
	c.SetWriteDeadline(time.Time{})
	got := make(chan string)
	go func() {
		time.Sleep(settle) // the writer below blocks first
		b := make([]byte, 10000)
		n, off, bad := 0, 0, false
		for {
			k, err := s.Read(b)
			for i := 0; i < k; i++ {
				if b[i] != byte((off+i)%251) {
					bad = true
				}
			}
			off += k
			n += k
			if err != nil {
				got <- fmt.Sprintf("%s, stream intact: %v", class(err), n == total+4<<20 && !bad)
				return
			}
		}
	}()
	big := make([]byte, 4<<20)
	pattern(big, total)
	n, err := c.Write(big)
	fmt.Printf("backpressure: a 4 MiB write completes once the peer reads: %s %v\n", class(err), n == len(big))
	c.Close()
	fmt.Printf("backpressure: the reader gets %s\n", <-got)
	s.Close()
}

// The peer closed (no unread data): the first write is sent and answered with a reset;
// later writes fail with EPIPE; reads see EOF (the FIN came first).
func peerClosed() {
	c, s := pair()
	s.Close()
	time.Sleep(settle)
	w1 := write(c, "x")
	time.Sleep(settle)
	fmt.Printf("peer closed: write %s, write %s, write %s, read %s, read %s\n", w1, write(c, "y"), write(c, "z"), read(c), read(c))
	c.Close()
}

func peerClosedReadFirst() {
	c, s := pair()
	s.Close()
	time.Sleep(settle)
	w1 := write(c, "x")
	time.Sleep(settle)
	fmt.Printf("peer closed, read first: write %s, read %s, read %s, write %s\n", w1, read(c), read(c), write(c, "y"))
	c.Close()
}

// The peer closed with unread data: it resets the connection at once. A read reports
// ECONNRESET once, then EOF; writes fail with EPIPE.
func unreadClose() {
	c, s := pair()
	write(c, "hello")
	time.Sleep(settle)
	s.Close()
	time.Sleep(settle)
	fmt.Printf("peer closed with unread data: read %s, read %s, write %s, write %s\n", read(c), read(c), write(c, "y"), write(c, "z"))
	c.Close()
}

func unreadCloseWriteFirst() {
	c, s := pair()
	write(c, "hello")
	time.Sleep(settle)
	s.Close()
	time.Sleep(settle)
	fmt.Printf("peer closed with unread data, write first: write %s, write %s, read %s\n", write(c, "y"), write(c, "z"), read(c))
	c.Close()
}

// Data that arrived before the reset is still read first.
func dataThenReset() {
	c, s := pair()
	write(s, "data")
	write(c, "hello")
	time.Sleep(settle)
	s.Close()
	time.Sleep(settle)
	fmt.Printf("data, then reset: read %s, read %s\n", read(c), read(c))
	c.Close()
}

// After the dialer shuts down writing, the acceptor reads EOF but can still write, and
// the dialer can still read.
func halfClose() {
	c, s := pair()
	write(c, "hello")
	if err := c.CloseWrite(); err != nil {
		fail("CloseWrite", err)
	}
	b, err := io.ReadAll(s)
	fmt.Printf("half-close: the acceptor reads %q, %s\n", b, class(err))
	fmt.Printf("half-close: the acceptor writes: %s\n", write(s, "world"))
	s.Close()
	b, err = io.ReadAll(c)
	fmt.Printf("half-close: the dialer reads %q, %s; writes: %s\n", b, class(err), write(c, "z"))
	c.Close()
}

func halfCloseReverse() {
	c, s := pair()
	write(s, "ping")
	if err := s.CloseWrite(); err != nil {
		fail("CloseWrite", err)
	}
	b, err := io.ReadAll(c)
	fmt.Printf("half-close reverse: the dialer reads %q, %s\n", b, class(err))
	fmt.Printf("half-close reverse: the dialer writes: %s\n", write(c, "pong"))
	if err := c.CloseWrite(); err != nil {
		fail("CloseWrite", err)
	}
	b, err = io.ReadAll(s)
	fmt.Printf("half-close reverse: the acceptor reads %q, %s\n", b, class(err))
	c.Close()
	s.Close()
}

// CloseRead (shutdown SHUT_RD) wakes a read blocked in another goroutine with EOF, and
// later reads return EOF at once; the write half stays open. The deadline only keeps a
// wrong implementation from hanging: it shows up as "timeout".
func closeRead() {
	c, s := pair()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	got := make(chan string)
	go func() { got <- read(c) }()
	time.Sleep(settle) // the reader blocks first
	if err := c.CloseRead(); err != nil {
		fail("CloseRead", err)
	}
	blocked := <-got
	fmt.Printf("close read: the blocked read %s, read %s, write %s\n", blocked, read(c), write(c, "x"))
	fmt.Printf("close read: the peer reads %s\n", read(s))
	c.Close()
	s.Close()
}

// SetLinger(0) and Close abort the connection (RST, not FIN): the peer reads the data
// that arrived first, then ECONNRESET once, then EOF, and its writes fail with EPIPE.
func lingerZero() {
	c, s := pair()
	write(c, "hello")
	time.Sleep(settle)
	if err := c.SetLinger(0); err != nil {
		fail("SetLinger", err)
	}
	c.Close()
	time.Sleep(settle)
	s.SetReadDeadline(time.Now().Add(2 * time.Second))
	fmt.Printf("linger 0: the peer reads %s, read %s, read %s, write %s\n", read(s), read(s), read(s), write(s, "x"))
	s.Close()
}
