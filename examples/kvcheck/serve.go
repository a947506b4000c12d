package kvcheck

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// Store is what a server puts behind the protocol: a library under test.
type Store interface {
	// Put stores value under key durably, or returns an error; the client is told OK
	// only after Put returned nil.
	Put(key, value string) error
	// Get returns key's value, or found false.
	Get(key string) (value string, found bool, err error)
}

// Serve accepts connections on ln and answers the line protocol from store:
//
//	PUT key value\n  ->  OK\n  or  ERR message\n
//	GET key\n        ->  VAL value\n  or  NONE\n  or  ERR message\n
func Serve(ln net.Listener, store Store) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go serveConn(store, conn)
	}
}

func serveConn(store Store, conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if _, err := io.WriteString(conn, handle(store, strings.TrimSuffix(line, "\n"))); err != nil {
			return
		}
	}
}

func handle(store Store, line string) string {
	cmd, args, _ := strings.Cut(line, " ")
	switch cmd {
	case "PUT":
		key, value, ok := strings.Cut(args, " ")
		if !ok || key == "" {
			return "ERR usage: PUT key value\n"
		}
		if err := store.Put(key, value); err != nil {
			return "ERR " + oneLine(err) + "\n"
		}
		return "OK\n"
	case "GET":
		v, found, err := store.Get(args)
		switch {
		case err != nil:
			return "ERR " + oneLine(err) + "\n"
		case !found:
			return "NONE\n"
		}
		return "VAL " + v + "\n"
	}
	return "ERR unknown command\n"
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

// MkdirDurable creates dir and fsyncs the parent of every directory it creates, so the
// directory itself survives a crash under strict_dirs. (The files in it are the
// library's job.)
func MkdirDurable(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := MkdirDurable(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		return err
	}
	d, err := os.Open(filepath.Dir(dir))
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
