// Command node is one server of the raft-wal example: hashicorp/raft v1.7.2 with the log
// and stable store of hashicorp/raft-wal v0.4.2, set up as Consul sets up its servers
// with `raft_logstore.backend = "wal"`: a WAL in <data>/wal (log segments, and
// wal-meta.db in bbolt v1.3.6) behind raft.NewLogCache, raft's FileSnapshotStore at
// <data>/snapshots keeping 2, and the stock TCP transport. Nothing in it imports
// seedfall: "net_overlay": true gives its sockets the simulated network, and the
// platform layer gives bbolt mmap and flock (docs/overlay.md).
//
// It is examples/raft-boltdb's node with the store swapped, kept a copy on purpose: a
// change to that node's code moves its runs, and with them the seeds its README quotes
// (moving its server into a package both could import changed the trace of every seed
// tried, 36 of 36, from the first disk op's source line on).
//
// It answers the line API of examples/raft's node, so that example's client is the
// workload here too (one request per line, one answer per line):
//
//	PUT key value     ->  OK index | REDIRECT leader-id | NOLEADER | ERR reason
//	APPEND key value  ->  OK index | REDIRECT leader-id | NOLEADER | ERR reason
//	READ key          ->  VAL value | NONE | REDIRECT leader-id | NOLEADER | ERR reason
//	GET key           ->  VAL value | NONE   (this node's applied state, possibly stale)
//	LEADER            ->  LEADER | REDIRECT leader-id | NOLEADER
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
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

func main() {
	id := flag.String("id", os.Getenv("SEEDFALL_NODE"), "this server's raft ID and node name")
	peers := flag.String("peers", "n1,n2,n3", "comma-separated IDs (node names) of every voter")
	data := flag.String("data", "/raft", "`dir` of wal/ and snapshots/")
	segmentSize := flag.Int("segment-size", 16<<10, "bytes per log segment (raft-wal's default, Consul's, is 64 MiB: a run here fills a few hundred KiB, so segments are small enough to rotate, seal and truncate many times in one)")
	trailingLogs := flag.Uint64("trailing-logs", 4, "raft's TrailingLogs: entries kept behind a snapshot (Consul's default is 10240; 4 compacts the log, deleting whole segments, many times in a run)")
	noSync := flag.Bool("nosync", false, "negative control: the segment files' Sync does nothing (entries are acknowledged unsynced)")
	logLevel := flag.String("log", "info", "raft log level")
	flag.Parse()
	if err := run(*id, strings.Split(*peers, ","), *data, *segmentSize, *trailingLogs, *noSync, *logLevel); err != nil {
		fmt.Fprintf(os.Stderr, "node %s: %v\n", *id, err)
		os.Exit(1)
	}
}

const raftPort, apiPort = 7000, 8000

func run(id string, peers []string, data string, segmentSize int, trailingLogs uint64, noSync bool, logLevel string) error {
	logger := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.LevelFromString(logLevel), Output: os.Stderr, DisableTime: true})
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(id)
	conf.Logger = logger
	// Short timeouts and frequent snapshots, as in examples/raft: a run is short in
	// virtual time, and the log is compacted (whole segments deleted) many times.
	conf.HeartbeatTimeout = 300 * time.Millisecond
	conf.ElectionTimeout = 300 * time.Millisecond
	conf.LeaderLeaseTimeout = 200 * time.Millisecond
	conf.CommitTimeout = 20 * time.Millisecond
	conf.SnapshotThreshold = 16
	conf.SnapshotInterval = 500 * time.Millisecond
	conf.TrailingLogs = trailingLogs

	// The data directory and snapshots/ exist before the server starts, made durably
	// (as an operator's install does): FileSnapshotStore would create snapshots/ with
	// MkdirAll and never fsync its parent (file_snapshot.go:102), which is examples/raft's
	// finding to tell, not this example's.
	walDir := filepath.Join(data, "wal")
	for _, dir := range []string{data, filepath.Join(data, "snapshots"), walDir} {
		if err := mkdirDurable(dir); err != nil {
			return err
		}
	}
	// The segment filer is raft-wal's default one (options.go), or the control's.
	var vfs types.VFS = fs.New()
	if noSync {
		vfs = noSyncVFS{fs.New()}
	}
	store, err := wal.Open(walDir, wal.WithSegmentSize(segmentSize), wal.WithLogger(logger.Named("wal")),
		wal.WithSegmentFiler(segment.NewFiler(walDir, vfs)))
	if err != nil {
		return fmt.Errorf("raft-wal: %w", err)
	}
	logs, err := raft.NewLogCache(512, store)
	if err != nil {
		return err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(data, 2, logger)
	if err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	advertise, err := net.ResolveTCPAddr("tcp", fmt.Sprintf("%s:%d", id, raftPort))
	if err != nil {
		return err
	}
	trans, err := raft.NewTCPTransportWithLogger(fmt.Sprintf(":%d", raftPort), advertise, 3, time.Second, logger)
	if err != nil {
		return fmt.Errorf("transport: %w", err)
	}
	fsm := &kvFSM{kv: map[string]string{}}
	r, err := raft.NewRaft(conf, fsm, logs, store, snaps, trans)
	if err != nil {
		return fmt.Errorf("raft: %w", err)
	}
	var servers []raft.Server
	for _, p := range peers {
		servers = append(servers, raft.Server{ID: raft.ServerID(p), Address: raft.ServerAddress(fmt.Sprintf("%s:%d", p, raftPort))})
	}
	// Every server bootstraps with the same configuration, which raft allows; after a
	// restart raft finds its state in the WAL and refuses, as it should.
	if err := r.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		return fmt.Errorf("bootstrap: %w", err)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", apiPort))
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

// mkdirDurable creates dir if it is missing and fsyncs its parent.
func mkdirDurable(dir string) error {
	if err := os.Mkdir(dir, 0o755); errors.Is(err, os.ErrExist) {
		return nil
	} else if err != nil {
		return err
	}
	parent, err := os.Open(filepath.Dir(dir))
	if err != nil {
		return err
	}
	defer parent.Close()
	return parent.Sync()
}

// serve answers one connection's requests in order.
func serve(c net.Conn, r *raft.Raft, fsm *kvFSM) {
	defer c.Close()
	in := bufio.NewScanner(c)
	for in.Scan() {
		if _, err := io.WriteString(c, answer(r, fsm, strings.Fields(in.Text()))+"\n"); err != nil {
			return
		}
	}
}

func answer(r *raft.Raft, fsm *kvFSM, req []string) string {
	if len(req) == 2 && req[0] == "GET" {
		return fsm.read(req[1])
	}
	lead := "LEADER"
	if r.State() != raft.Leader {
		lead = "NOLEADER"
		if _, leader := r.LeaderWithID(); leader != "" {
			lead = "REDIRECT " + string(leader)
		}
	}
	switch {
	case len(req) == 1 && req[0] == "LEADER":
		return lead
	case lead != "LEADER":
		return lead
	case len(req) == 3 && (req[0] == "PUT" || req[0] == "APPEND"), len(req) == 2 && req[0] == "READ":
		f := r.Apply([]byte(strings.Join(req, " ")), 2*time.Second)
		if err := f.Error(); err != nil {
			return "ERR " + err.Error()
		}
		if ans, ok := f.Response().(string); ok {
			return ans
		}
		return fmt.Sprintf("OK %d", f.Index())
	}
	return "ERR bad request"
}

// kvFSM is the replicated map. Apply answers a READ with its line-API answer.
type kvFSM struct {
	mu sync.Mutex
	kv map[string]string
}

func (m *kvFSM) Apply(l *raft.Log) any {
	f := strings.Fields(string(l.Data))
	if len(f) == 2 && f[0] == "READ" {
		return m.read(f[1])
	}
	if len(f) != 3 {
		return "ERR bad entry " + string(l.Data)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f[0] == "APPEND" {
		f[2] = m.kv[f[1]] + f[2]
	}
	m.kv[f[1]] = f[2]
	return nil
}

func (m *kvFSM) read(k string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.kv[k]; ok {
		return "VAL " + v
	}
	return "NONE"
}

func (m *kvFSM) Snapshot() (raft.FSMSnapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, err := json.Marshal(m.kv) // keys sorted
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

func (snapshot) Release() {}

// noSyncVFS is the negative control's file system: raft-wal's own, with segment files
// whose Sync does nothing, so appends are acknowledged before they are durable.
type noSyncVFS struct{ *fs.FS }

func (v noSyncVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.FS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (v noSyncVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.FS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

type noSyncFile struct{ types.WritableFile }

func (noSyncFile) Sync() error { return nil }
