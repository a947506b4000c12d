// Command node is one server of the raft example: hashicorp/raft v1.8.0 on its stock
// TCP transport (raft.NewTCPTransport), with a key-value FSM and a line API for the
// workload. It does not import seedfall: built with "net_overlay": true, its sockets
// are the simulated network's.
//
// Line API on -api (one request per line, one answer per line):
//
//	PUT key value  ->  OK index | REDIRECT leader-id | NOLEADER | ERR reason
//	READ key       ->  VAL value | NONE | REDIRECT leader-id | NOLEADER | ERR reason
//	               (linearizable: the read goes through the raft log)
//	GET key        ->  VAL value | NONE   (this node's applied state, possibly stale)
//
// The raft log and stable store are in memory (raft.NewInmemStore), snapshots on disk
// (raft.NewFileSnapshotStore): the example's faults are network faults, not crashes.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

func main() {
	id := flag.String("id", "", "this server's raft ID, which is also its node name (default $SEEDFALL_NODE)")
	peers := flag.String("peers", "n1,n2,n3", "comma-separated IDs (node names) of every voter")
	raftPort := flag.Int("raft-port", 7000, "raft transport port (on every node)")
	api := flag.String("api", ":8000", "`address` of the line API")
	logLevel := flag.String("log", "info", "raft log level")
	flag.Parse()
	if *id == "" {
		*id = os.Getenv("SEEDFALL_NODE")
	}
	if err := run(*id, strings.Split(*peers, ","), *raftPort, *api, *logLevel); err != nil {
		fmt.Fprintf(os.Stderr, "node %s: %v\n", *id, err)
		os.Exit(1)
	}
}

func run(id string, peers []string, raftPort int, api, logLevel string) error {
	logger := hclog.New(&hclog.LoggerOptions{
		Name: "raft", Level: hclog.LevelFromString(logLevel), Output: os.Stderr, DisableTime: true,
	})
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(id)
	conf.Logger = logger
	// Short timeouts keep a run short in virtual time.
	conf.HeartbeatTimeout = 300 * time.Millisecond
	conf.ElectionTimeout = 300 * time.Millisecond
	conf.LeaderLeaseTimeout = 200 * time.Millisecond
	conf.CommitTimeout = 20 * time.Millisecond
	conf.SnapshotThreshold = 64
	conf.SnapshotInterval = 2 * time.Second
	conf.TrailingLogs = 32

	// raft.NewTCPTransport wants an advertisable address: resolve our own name (the net
	// overlay answers with the node's stable fake IP).
	advertise, err := net.ResolveTCPAddr("tcp", fmt.Sprintf("%s:%d", id, raftPort))
	if err != nil {
		return err
	}
	trans, err := raft.NewTCPTransportWithLogger(fmt.Sprintf(":%d", raftPort), advertise, 3, time.Second, logger)
	if err != nil {
		return fmt.Errorf("transport: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger("/raft", 2, logger)
	if err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	store := raft.NewInmemStore()
	fsm := &kvFSM{kv: map[string]string{}}
	r, err := raft.NewRaft(conf, fsm, store, store, snaps, trans)
	if err != nil {
		return fmt.Errorf("raft: %w", err)
	}
	var servers []raft.Server
	for _, p := range peers {
		servers = append(servers, raft.Server{ID: raft.ServerID(p), Address: raft.ServerAddress(fmt.Sprintf("%s:%d", p, raftPort))})
	}
	// Every server bootstraps with the same configuration, which raft allows.
	if err := r.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return fmt.Errorf("bootstrap: %w", err)
	}
	go func() {
		for leader := range r.LeaderCh() {
			if leader {
				fmt.Printf("became leader\n")
			} else {
				fmt.Printf("lost leadership\n")
			}
		}
	}()

	ln, err := net.Listen("tcp", api)
	if err != nil {
		return err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go serve(c, r, fsm)
	}
}

func serve(c net.Conn, r *raft.Raft, fsm *kvFSM) {
	defer c.Close()
	in := bufio.NewScanner(c)
	for in.Scan() {
		f := strings.Fields(in.Text())
		var answer string
		switch {
		case len(f) == 3 && f[0] == "PUT":
			answer = apply(r, f[1]+"="+f[2])
		case len(f) == 2 && f[0] == "READ":
			answer = apply(r, "?"+f[1])
		case len(f) == 2 && f[0] == "GET":
			if v, ok := fsm.get(f[1]); ok {
				answer = "VAL " + v
			} else {
				answer = "NONE"
			}
		default:
			answer = "ERR bad request"
		}
		if _, err := io.WriteString(c, answer+"\n"); err != nil {
			return
		}
	}
}

// apply submits a command to the log on the leader: "key=value" writes, "?key" reads.
func apply(r *raft.Raft, cmd string) string {
	if r.State() != raft.Leader {
		if _, id := r.LeaderWithID(); id != "" {
			return "REDIRECT " + string(id)
		}
		return "NOLEADER"
	}
	f := r.Apply([]byte(cmd), 2*time.Second)
	if err := f.Error(); err != nil {
		return "ERR " + err.Error()
	}
	switch resp := f.Response().(type) {
	case readResult:
		if !resp.found {
			return "NONE"
		}
		return "VAL " + resp.value
	case error:
		return "ERR " + resp.Error()
	}
	return fmt.Sprintf("OK %d", f.Index())
}

// readResult is the FSM's answer to a read command.
type readResult struct {
	value string
	found bool
}

// kvFSM is the replicated state: a map from key to value.
type kvFSM struct {
	mu sync.Mutex
	kv map[string]string
}

func (m *kvFSM) Apply(l *raft.Log) any {
	if k, ok := strings.CutPrefix(string(l.Data), "?"); ok {
		v, found := m.get(k)
		return readResult{v, found}
	}
	k, v, ok := strings.Cut(string(l.Data), "=")
	if !ok {
		return fmt.Errorf("bad entry %q", l.Data)
	}
	m.mu.Lock()
	m.kv[k] = v
	m.mu.Unlock()
	return nil
}

func (m *kvFSM) get(k string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.kv[k]
	return v, ok
}

func (m *kvFSM) Snapshot() (raft.FSMSnapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, err := json.Marshal(m.kv)
	return snapshot(data), err
}

func (m *kvFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	kv := map[string]string{}
	if err := json.NewDecoder(rc).Decode(&kv); err != nil {
		return err
	}
	m.mu.Lock()
	m.kv = kv
	m.mu.Unlock()
	return nil
}

type snapshot []byte

func (s snapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s snapshot) Release() {}
