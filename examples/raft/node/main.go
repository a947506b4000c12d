// Command node is one server of the raft example: hashicorp/raft v1.8.0 on its stock
// TCP transport (raft.NewTCPTransport), with a key-value FSM and a line API for the
// workload. It does not import seedfall: built with "net_overlay": true, its sockets
// are the simulated network's.
//
// Line API on -api (one request per line, one answer per line):
//
//	PUT key value     ->  OK index | REDIRECT leader-id | NOLEADER | ERR reason
//	APPEND key value  ->  OK index | REDIRECT leader-id | NOLEADER | ERR reason
//	READ key          ->  VAL value | NONE | REDIRECT leader-id | NOLEADER | ERR reason
//	                  (linearizable: the read goes through the raft log)
//	GET key           ->  VAL value | NONE   (this node's applied state, possibly stale)
//	LEADER            ->  LEADER | REDIRECT leader-id | NOLEADER
//
// With -data, the raft log and stable store are files under that directory (store.go)
// and the snapshots are raft's own FileSnapshotStore in -data/snapshots, so a crashed
// server comes back with what it had made durable. Without -data the log is in memory
// (raft.NewInmemStore) and the snapshots go to /raft: fine while nodes never crash.
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
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// opts are the storage and snapshot settings.
var opts struct {
	data              string
	nosync            bool
	snapshotThreshold uint64
	snapshotInterval  time.Duration
	trailingLogs      uint64
}

func main() {
	id := flag.String("id", "", "this server's raft ID, which is also its node name (default $SEEDFALL_NODE)")
	peers := flag.String("peers", "n1,n2,n3", "comma-separated IDs (node names) of every voter")
	raftPort := flag.Int("raft-port", 7000, "raft transport port (on every node)")
	api := flag.String("api", ":8000", "`address` of the line API")
	logLevel := flag.String("log", "info", "raft log level")
	flag.StringVar(&opts.data, "data", "", "`dir` of the durable log, stable store and snapshots (default: log in memory)")
	flag.BoolVar(&opts.nosync, "nosync", false, "negative control: the file store never fsyncs the log")
	flag.Uint64Var(&opts.snapshotThreshold, "snapshot-threshold", 16, "raft SnapshotThreshold: entries since the last snapshot")
	flag.DurationVar(&opts.snapshotInterval, "snapshot-interval", 500*time.Millisecond, "raft SnapshotInterval")
	flag.Uint64Var(&opts.trailingLogs, "trailing-logs", 4, "raft TrailingLogs: entries kept behind a snapshot")
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
	// Frequent snapshots and a short trailing log: the log is compacted many times in
	// a run, so restarts recover from a snapshot plus a few entries.
	conf.SnapshotThreshold = opts.snapshotThreshold
	conf.SnapshotInterval = opts.snapshotInterval
	conf.TrailingLogs = opts.trailingLogs

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
	var logs raft.LogStore
	var stable raft.StableStore
	snapDir := "/raft"
	if opts.data == "" {
		store := raft.NewInmemStore()
		logs, stable = store, store
	} else {
		store, err := openFileStore(opts.data, opts.nosync)
		if err != nil {
			return fmt.Errorf("file store: %w", err)
		}
		logs, stable = store, store
		snapDir = opts.data
		// raft's FileSnapshotStore creates <dir>/snapshots with MkdirAll and never
		// fsyncs its parent; create it durably first.
		if err := store.mkdirAll(filepath.Join(snapDir, "snapshots")); err != nil {
			return fmt.Errorf("snapshot dir: %w", err)
		}
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(snapDir, 2, logger)
	if err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	fsm := &kvFSM{kv: map[string]string{}}
	r, err := raft.NewRaft(conf, fsm, logs, stable, snaps, trans)
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
		case len(f) == 3 && (f[0] == "PUT" || f[0] == "APPEND"):
			answer = apply(r, f[0]+" "+f[1]+" "+f[2])
		case len(f) == 2 && f[0] == "READ":
			answer = apply(r, "READ "+f[1])
		case len(f) == 1 && f[0] == "LEADER":
			answer = leader(r)
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

// apply submits a command to the log on the leader: "PUT key value", "APPEND key
// value" or "READ key".
func apply(r *raft.Raft, cmd string) string {
	if ans := leader(r); ans != "LEADER" {
		return ans
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

// leader answers LEADER on the leader, else REDIRECT leader-id or NOLEADER.
func leader(r *raft.Raft) string {
	if r.State() == raft.Leader {
		return "LEADER"
	}
	if _, id := r.LeaderWithID(); id != "" {
		return "REDIRECT " + string(id)
	}
	return "NOLEADER"
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
	f := strings.Fields(string(l.Data))
	switch {
	case len(f) == 2 && f[0] == "READ":
		v, found := m.get(f[1])
		return readResult{v, found}
	case len(f) == 3 && (f[0] == "PUT" || f[0] == "APPEND"):
		m.mu.Lock()
		if f[0] == "PUT" {
			m.kv[f[1]] = f[2]
		} else {
			m.kv[f[1]] += f[2]
		}
		m.mu.Unlock()
		return nil
	}
	return fmt.Errorf("bad entry %q", l.Data)
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
